// trace_files.h - the files around a trace that device.cpp and tpusim.cpp write (not a public
// interface): converting FST to VCD with GTKWave's fst2vcd, temporaries beside the target that a
// signal removes (io/tpuio.h's tracking), and the free space a trace needs.
#ifndef TPU_SIM_TRACE_FILES_H
#define TPU_SIM_TRACE_FILES_H

#include <string>

namespace tpu::trace_files
{

bool on_path(const char *prog); // an executable of that name on PATH
// fst2vcd -f fst -o vcd, quietly; true on success.
bool fst_to_vcd(const std::string &fst, const std::string &vcd);
// A new empty file "<path>.tmp.XXXXXX" beside path, tracked so a signal removes it; its name, or
// "" with the reason in err.
std::string temp_beside(const std::string &path, std::string *err);
// True if a trace at path has the free space it needs (or it cannot be told), else false with
// the reason in err.
bool trace_space(const std::string &path, std::string *err);
void remove_tracked(const std::string &path); // removes the file and forgets it

} // namespace tpu::trace_files

#endif
