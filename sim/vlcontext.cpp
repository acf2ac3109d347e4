// vlcontext.cpp - Verilator's per-thread context, set for device.cpp. Built without the
// sanitizers: Verilated::t_s, the thread_local it lives in, is defined in Verilator's own
// (unsanitized) runtime, and reaching it from sanitized code trips UBSan's null-pointer check on
// GCC's TLS wrapper.
#include <verilated.h>

void tpusim_vl_thread_context(VerilatedContext *ctx) { Verilated::threadContextp(ctx); }
