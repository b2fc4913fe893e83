#include "worker/handlers/cache/disk_worker.h"

#include "common/log.h"

namespace scalws::worker::cache {

DiskWorker::DiskWorker(std::unique_ptr<DiskStore> store, std::atomic<uint32_t>& scanned)
    : store_(std::move(store)), scanned_(scanned) {
  thread_ = std::thread([this] { run(); });
}

DiskWorker::~DiskWorker() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void DiskWorker::push(Job job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    if (job.kind == Job::Kind::kWrite) queued_write_bytes_ += job.data.size();
    jobs_.push_back(std::move(job));
    ++pushed_;
  }
  wake_.notify_one();
}

void DiskWorker::read(uint64_t key_hash, std::string key, ReadDone done) {
  Job job;
  job.kind = Job::Kind::kRead;
  job.key_hash = key_hash;
  job.data = std::move(key);
  job.read_done = std::move(done);
  push(std::move(job));
}

bool DiskWorker::write(uint64_t key_hash, std::string bytes) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (queued_write_bytes_ + bytes.size() > kMaxQueuedWriteBytes) return false;
  }
  Job job;
  job.kind = Job::Kind::kWrite;
  job.key_hash = key_hash;
  job.data = std::move(bytes);
  push(std::move(job));
  return true;
}

void DiskWorker::remove(uint64_t key_hash) {
  Job job;
  job.kind = Job::Kind::kRemove;
  job.key_hash = key_hash;
  push(std::move(job));
}

void DiskWorker::removeMatching(std::function<bool(std::string_view uri)> match,
                                std::function<void(size_t)> done) {
  Job job;
  job.kind = Job::Kind::kRemoveMatching;
  job.match = std::move(match);
  job.count_done = std::move(done);
  push(std::move(job));
}

void DiskWorker::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  uint64_t target = pushed_;
  drained_.wait(lock, [&] { return done_ >= target || stopping_; });
}

void DiskWorker::run() {
  uint32_t expected = 0;
  if (scanned_.compare_exchange_strong(expected, 1)) store_->scan();
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
      if (stopping_) {
        drained_.notify_all();
        return;
      }
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    switch (job.kind) {
      case Job::Kind::kRead: {
        std::string bytes;
        DiskStore::ReadResult r = store_->read(job.key_hash, job.data, bytes);
        if (r == DiskStore::ReadResult::kCorrupt) {
          LOG_WARN("cache: a damaged disk entry was dropped (key hash %016llx)",
                   static_cast<unsigned long long>(job.key_hash));
        }
        if (job.read_done) job.read_done(r, std::move(bytes));
        break;
      }
      case Job::Kind::kWrite: {
        common::Status s = store_->write(job.key_hash, job.data);
        if (!s.ok()) LOG_WARN("cache: disk write failed: %s", s.message().c_str());
        break;
      }
      case Job::Kind::kRemove:
        store_->remove(job.key_hash);
        break;
      case Job::Kind::kRemoveMatching: {
        size_t n = job.match ? store_->removeMatching(job.match) : store_->removeAll();
        if (job.count_done) job.count_done(n);
        break;
      }
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (job.kind == Job::Kind::kWrite) queued_write_bytes_ -= job.data.size();
      ++done_;
    }
    drained_.notify_all();
  }
}

}  // namespace scalws::worker::cache
