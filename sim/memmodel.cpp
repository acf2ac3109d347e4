// memmodel.cpp - see memmodel.h for the timing and semantics.
#include "sim/memmodel.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

namespace tpu
{

void MemModel::FreeDeleter::operator()(uint8_t *p) const { std::free(p); }

MemModel::MemModel(uint64_t size, uint32_t bus_bytes, uint32_t latency, uint32_t bytes_per_cycle,
                   const tpusim_memory *external)
    : external_(external),
      data_(external ? nullptr : static_cast<uint8_t *>(std::calloc(size ? size : 1, 1))),
      size_(size), bus_bytes_(bus_bytes), ring_(64), rdata_(ring_.size() * bus_bytes)
{
    if (!external && !data_)
        throw std::bad_alloc();
    set_timing(latency, bytes_per_cycle);
}

void MemModel::set_timing(uint32_t latency, uint32_t bytes_per_cycle)
{
    latency_ = std::max<uint32_t>(latency, 1);
    bytes_per_cycle_ = std::max<uint32_t>(bytes_per_cycle, 1);
}

void MemModel::clear()
{
    head_ = 0;
    count_ = 0;
    backlog_ = 0;
}

bool MemModel::response(MemResponse *out) const
{
    if (count_ == 0 || ring_[head_].due > now_)
        return false;
    out->id = ring_[head_].id;
    out->err = ring_[head_].err;
    out->rdata = &rdata_[head_ * bus_bytes_];
    return true;
}

void MemModel::grow()
{
    const size_t cap = ring_.size();
    std::vector<Pending> ring(2 * cap);
    std::vector<uint8_t> rdata(ring.size() * bus_bytes_);
    for (size_t i = 0; i < count_; i++) {
        const size_t from = (head_ + i) % cap;
        ring[i] = ring_[from];
        std::memcpy(&rdata[i * bus_bytes_], &rdata_[from * bus_bytes_], bus_bytes_);
    }
    ring_.swap(ring);
    rdata_.swap(rdata);
    head_ = 0;
}

void MemModel::edge(const MemRequest *req, bool rsp_taken)
{
    if (rsp_taken && count_ != 0 && ring_[head_].due <= now_) {
        head_ = (head_ + 1) % ring_.size();
        count_--;
    }
    if (req && req_ready()) {
        if (count_ == ring_.size())
            grow();
        const size_t slot = (head_ + count_) % ring_.size();
        uint8_t *rd = &rdata_[slot * bus_bytes_];
        std::memset(rd, 0, bus_bytes_);
        uint32_t latency = latency_;
        const bool err =
            req->len > bus_bytes_ || !in_range(req->addr, req->len) || !perform(*req, rd, &latency);
        ring_[slot] = Pending{now_ + latency, req->id, err};
        count_++;
        backlog_ += req->len;
    }
    backlog_ -= std::min<uint64_t>(backlog_, bytes_per_cycle_);
    now_++;
}

bool MemModel::perform(const MemRequest &req, uint8_t *rd, uint32_t *latency)
{
    if (!external_) {
        if (req.we)
            std::memcpy(data_.get() + req.addr, req.wdata, req.len);
        else
            std::memcpy(rd, data_.get() + req.addr, req.len);
        return true;
    }
    // access() only reads a write's data (the core's request buffer).
    uint8_t *data = req.we ? const_cast<uint8_t *>(req.wdata) : rd;
    const int rc =
        external_->access(external_->ctx, now_, req.we, req.addr, data, req.len, latency);
    *latency = std::max<uint32_t>(*latency, 1);
    if (rc == 0)
        return true;
    std::memset(rd, 0, bus_bytes_); // an error's read data is zero, whatever access() left there
    return false;
}

bool MemModel::write(uint64_t addr, const void *src, size_t n)
{
    if (!in_range(addr, n))
        return false;
    if (external_) // debug() only reads what it writes
        return external_->debug(external_->ctx, 1, addr,
                                static_cast<uint8_t *>(const_cast<void *>(src)), n) == 0;
    if (n)
        std::memcpy(data_.get() + addr, src, n);
    return true;
}

bool MemModel::read(uint64_t addr, void *dst, size_t n) const
{
    if (!in_range(addr, n))
        return false;
    if (external_)
        return external_->debug(external_->ctx, 0, addr, static_cast<uint8_t *>(dst), n) == 0;
    if (n)
        std::memcpy(dst, data_.get() + addr, n);
    return true;
}

} // namespace tpu
