// server/run_queue.cpp — see run_queue.h.
#include "server/run_queue.h"

#include <algorithm>
#include <cassert>
#include <utility>

namespace skillbox::server {
namespace {

LaneConfig sane(LaneConfig c) {
  c.weight = std::max<size_t>(c.weight, 1);
  c.max_running = std::max<size_t>(c.max_running, 1);
  return c;
}

}  // namespace

RunQueue::RunQueue(size_t threads, size_t queue_limit, const std::vector<LaneConfig>& lanes)
    : threads_(std::max<size_t>(threads, 1)), queue_limit_(queue_limit) {
  {
    base::MutexLock lock(mu_);
    for (const LaneConfig& c : lanes)
      lanes_.push_back(Lane{.config = sane(c), .jobs = {}, .running = 0, .deficit = 0});
  }
  pool_.reserve(threads_);
  for (size_t i = 0; i < threads_; ++i) pool_.emplace_back([this] { work(); });
}

RunQueue::~RunQueue() {
  shutdown();
  for (std::thread& t : pool_) t.join();
}

size_t RunQueue::add_lane(LaneConfig config) {
  base::MutexLock lock(mu_);
  lanes_.push_back(Lane{.config = sane(config), .jobs = {}, .running = 0, .deficit = 0});
  return lanes_.size() - 1;
}

void RunQueue::configure_lane(size_t lane, LaneConfig config) {
  {
    base::MutexLock lock(mu_);
    assert(lane < lanes_.size());
    lanes_[lane].config = sane(config);
  }
  cv_.notify_all();  // a higher max_running may make the lane eligible
}

RunQueue::Ticket RunQueue::submit(size_t lane, Job job) {
  Ticket ticket;
  {
    base::MutexLock lock(mu_);
    assert(lane < lanes_.size());
    if (stopping_) return ticket;
    Lane& l = lanes_[lane];
    // Jobs that can start at once (a free thread, the lane under its running cap) do not count as
    // waiting: the bounds are on what waits.
    const size_t idle = threads_ - std::min(running_, threads_);
    const size_t lane_free = l.config.max_running - std::min(l.running, l.config.max_running);
    if (l.jobs.size() >= l.config.max_queued + std::min(idle, lane_free)) {
      ticket.admission = Admission::lane_full;
      return ticket;
    }
    if (queued_ >= queue_limit_ + idle) {
      ticket.admission = Admission::server_full;
      return ticket;
    }
    ticket = Ticket{.admission = Admission::queued, .id = next_id_++};
    l.jobs.push_back(Entry{.id = ticket.id, .queued_at = Clock::now(), .job = std::move(job)});
    ++queued_;
  }
  cv_.notify_all();
  return ticket;
}

bool RunQueue::withdraw(uint64_t id) {
  Job dropped;  // destroyed after the lock is released: it may own what its destructor frees
  base::MutexLock lock(mu_);
  for (Lane& l : lanes_) {
    const auto it = std::find_if(l.jobs.begin(), l.jobs.end(), [id](const Entry& e) { return e.id == id; });
    if (it == l.jobs.end()) continue;
    dropped = std::move(it->job);
    l.jobs.erase(it);
    --queued_;
    return true;
  }
  return false;
}

size_t RunQueue::pending() const {
  base::MutexLock lock(mu_);
  return queued_ + running_;
}

bool RunQueue::stopped() const {
  base::MutexLock lock(mu_);
  return stopping_;
}

std::vector<RunQueue::LaneCounts> RunQueue::counts() const {
  base::MutexLock lock(mu_);
  std::vector<LaneCounts> out;
  out.reserve(lanes_.size());
  for (const Lane& l : lanes_) out.push_back(LaneCounts{.running = l.running, .queued = l.jobs.size()});
  return out;
}

void RunQueue::shutdown() {
  {
    base::MutexLock lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
}

bool RunQueue::eligible(const Lane& lane) const {
  return !lane.jobs.empty() && lane.running < lane.config.max_running;
}

bool RunQueue::any_eligible() const {
  return std::any_of(lanes_.begin(), lanes_.end(), [this](const Lane& l) {
    mu_.assert_held();
    return eligible(l);
  });
}

size_t RunQueue::pick() {
  assert(any_eligible());  // else the loop would not end
  for (;;) {
    Lane& l = lanes_[cursor_];
    if (eligible(l) && l.deficit > 0) {
      --l.deficit;
      return cursor_;
    }
    // A lane with nothing to send keeps no credit: an idle tenant cannot save up a burst.
    if (l.jobs.empty()) l.deficit = 0;
    cursor_ = (cursor_ + 1) % lanes_.size();
    Lane& next = lanes_[cursor_];
    if (eligible(next)) next.deficit += next.config.weight;
  }
}

void RunQueue::work() {
  for (;;) {
    Entry entry;
    size_t lane = 0;
    {
      base::MutexLock lock(mu_);
      lock.wait(cv_, [this] {
        mu_.assert_held();
        return (stopping_ && queued_ == 0) || any_eligible();
      });
      if (queued_ == 0) return;  // stopping, and nothing left to run
      lane = pick();
      Lane& l = lanes_[lane];
      entry = std::move(l.jobs.front());
      l.jobs.pop_front();
      --queued_;
      ++l.running;
      ++running_;
    }
    Then then =
        entry.job(Clock::now() - entry.queued_at);  // jobs catch their own exceptions (server/api.cpp)
    entry = Entry{};                                // the job's captures go before the thread looks again
    {
      base::MutexLock lock(mu_);
      --lanes_[lane].running;
      --running_;
    }
    cv_.notify_all();  // a lane at its running cap may be eligible again
    if (then) then();
  }
}

}  // namespace skillbox::server
