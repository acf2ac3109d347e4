// weights_test.h - safetensors files of random float weights for the compile tests.
#ifndef TPU_TESTS_SUPPORT_WEIGHTS_TEST_H
#define TPU_TESTS_SUPPORT_WEIGHTS_TEST_H

#include <cstdint>
#include <fstream>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace weights_test
{

// A safetensors file of f32 tensors (name, dims) with values in [-0.5, 0.5].
inline void save_weights(const std::string &path,
                         const std::vector<std::pair<std::string, std::vector<int64_t>>> &tensors)
{
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-0.5f, 0.5f);
    std::string header = "{", data;
    for (const auto &[name, dims] : tensors) {
        int64_t count = 1;
        std::string shape;
        for (int64_t d : dims) {
            count *= d;
            shape += (shape.empty() ? "" : ",") + std::to_string(d);
        }
        const size_t at = data.size();
        for (int64_t i = 0; i < count; i++) {
            const float v = u(rng);
            data.append((const char *)&v, 4);
        }
        header += std::string(header.size() > 1 ? "," : "") + "\"" + name +
                  "\":{\"dtype\":\"F32\",\"shape\":[" + shape + "],\"data_offsets\":[" +
                  std::to_string(at) + "," + std::to_string(data.size()) + "]}";
    }
    header += "}";
    std::string len(8, '\0');
    for (int i = 0; i < 8; i++)
        len[i] = (char)(header.size() >> (8 * i));
    std::ofstream(path, std::ios::binary) << len << header << data;
}

} // namespace weights_test

#endif
