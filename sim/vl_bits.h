// vl_bits.h - bytes and bit fields of Verilator's vectors (internal to libtpusim's device.cpp).
#ifndef TPU_SIM_VL_BITS_H
#define TPU_SIM_VL_BITS_H

#include <verilated.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace tpu
{

// Verilator holds a vector of up to 64 bits in an integer and wider ones in VlWide words, both
// little-endian by bit; these move n bytes (byte i = bits 8i+7..8i) between them and byte arrays.
// On a little-endian host a VlWide's words hold its bytes in that order, so a wide bus (the memory
// data, every response and write request) is one memcpy.
constexpr bool kLittleEndian = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
template <typename T> void get_bytes(const T &v, uint8_t *dst, size_t n)
{
    static_assert(std::is_integral<T>::value, "Verilator scalar");
    for (size_t i = 0; i < n; i++)
        dst[i] = static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * i));
}
template <std::size_t W> void get_bytes(const VlWide<W> &v, uint8_t *dst, size_t n)
{
    if (kLittleEndian && n <= 4 * W) {
        std::memcpy(dst, v.data(), n);
        return;
    }
    for (size_t i = 0; i < n; i++)
        dst[i] = static_cast<uint8_t>(v.at(i / 4) >> (8 * (i % 4)));
}
template <typename T> void set_bytes(T &v, const uint8_t *src, size_t n)
{
    static_assert(std::is_integral<T>::value, "Verilator scalar");
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++)
        x |= static_cast<uint64_t>(src[i]) << (8 * i);
    v = static_cast<T>(x);
}
// Words past n bytes are zero.
template <std::size_t W> void set_bytes(VlWide<W> &v, const uint8_t *src, size_t n)
{
    if (kLittleEndian && n == 4 * W) {
        std::memcpy(v.data(), src, n);
        return;
    }
    for (size_t w = 0; w < W; w++) {
        uint32_t x = 0;
        for (size_t b = 0; b < 4 && 4 * w + b < n; b++)
            x |= static_cast<uint32_t>(src[4 * w + b]) << (8 * b);
        v.at(w) = x;
    }
}

// The width-bit field at bit lsb of a vector (width <= 32, inside one 32-bit word).
template <typename T> uint32_t get_field(const T &v, unsigned lsb, unsigned width)
{
    static_assert(std::is_integral<T>::value, "Verilator scalar");
    return static_cast<uint32_t>(static_cast<uint64_t>(v) >> lsb & ((1ull << width) - 1));
}
template <std::size_t W> uint32_t get_field(const VlWide<W> &v, unsigned lsb, unsigned width)
{
    return static_cast<uint32_t>(v.at(lsb / 32) >> (lsb % 32) & ((1ull << width) - 1));
}
template <typename T> void set_field(T &v, unsigned lsb, unsigned width, uint32_t x)
{
    static_assert(std::is_integral<T>::value, "Verilator scalar");
    const uint64_t mask = ((1ull << width) - 1) << lsb;
    v = static_cast<T>((static_cast<uint64_t>(v) & ~mask) |
                       (static_cast<uint64_t>(x) << lsb & mask));
}
template <std::size_t W> void set_field(VlWide<W> &v, unsigned lsb, unsigned width, uint32_t x)
{
    const uint32_t mask = static_cast<uint32_t>(((1ull << width) - 1) << (lsb % 32));
    EData &word = v.at(lsb / 32);
    word = (word & ~mask) | (x << (lsb % 32) & mask);
}

} // namespace tpu

#endif
