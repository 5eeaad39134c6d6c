// server/run_queue.h in-process: the order weighted deficit round robin starts jobs in, each lane's
// running cap and queue bound, the server-wide bound, and withdrawing a queued job.
#include "server/run_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/held_answer.h"

namespace skillbox::server {
namespace {

using namespace std::chrono_literals;
using Admission = RunQueue::Admission;

/// A job that holds its thread until release() (or the Gate's end), and says when it started.
class Gate {
 public:
  ~Gate() { release(); }
  RunQueue::Job job() {
    return [this](RunQueue::Clock::duration /*waited*/) -> RunQueue::Then {
      ++started_;
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return open_; });
      return {};
    };
  }
  void release() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  /// Waits up to 10 s for `n` jobs of this gate to have started.
  bool started(int n) const {
    for (int i = 0; i < 1000 && started_.load() < n; ++i) std::this_thread::sleep_for(10ms);
    return started_.load() >= n;
  }
  int count() const { return started_.load(); }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
  std::atomic<int> started_{0};
};

TEST(RunQueue, LanesStartJobsInProportionToTheirWeights) {
  std::string order;
  std::mutex mu;
  const auto record = [&](char c) {
    return [&, c](RunQueue::Clock::duration) -> RunQueue::Then {
      std::lock_guard<std::mutex> lock(mu);
      order += c;
      return {};
    };
  };
  Gate gate;
  {
    RunQueue q(1, 100,
               {LaneConfig{.weight = 2, .max_running = 1, .max_queued = 10},
                LaneConfig{.weight = 1, .max_running = 1, .max_queued = 10},
                LaneConfig{.weight = 1, .max_running = 1, .max_queued = 10}});
    ASSERT_EQ(q.submit(2, gate.job()).admission, Admission::queued);  // holds the only thread
    ASSERT_TRUE(gate.started(1));
    // Lane 0 floods first; lane 1 asks later, and still gets one start in three, not the last three.
    for (int i = 0; i < 6; ++i) ASSERT_EQ(q.submit(0, record('a')).admission, Admission::queued);
    for (int i = 0; i < 3; ++i) ASSERT_EQ(q.submit(1, record('b')).admission, Admission::queued);
    gate.release();
  }  // the destructor runs what is queued
  EXPECT_EQ(order, "aabaabaab");
}

TEST(RunQueue, AQuietLaneIsServedBeforeAFloodingLanesBacklog) {
  std::string order;
  std::mutex mu;
  const auto record = [&](char c) {
    return [&, c](RunQueue::Clock::duration) -> RunQueue::Then {
      std::lock_guard<std::mutex> lock(mu);
      order += c;
      return {};
    };
  };
  Gate gate;
  {
    RunQueue q(1, 100, {LaneConfig{.max_queued = 20}, LaneConfig{}});
    ASSERT_EQ(q.submit(0, gate.job()).admission, Admission::queued);
    ASSERT_TRUE(gate.started(1));
    for (int i = 0; i < 10; ++i) ASSERT_EQ(q.submit(0, record('a')).admission, Admission::queued);
    ASSERT_EQ(q.submit(1, record('b')).admission, Admission::queued);
    gate.release();
  }
  ASSERT_EQ(order.size(), 11u);
  EXPECT_LE(order.find('b'), 1u) << order;  // FIFO would put it last
}

TEST(RunQueue, ALaneRunsAtMostItsCapWhileOtherLanesUseTheFreeThreads) {
  Gate a;
  Gate b;
  RunQueue q(3, 100, {LaneConfig{.max_running = 1, .max_queued = 5}, LaneConfig{}});
  ASSERT_EQ(q.submit(0, a.job()).admission, Admission::queued);
  ASSERT_EQ(q.submit(0, a.job()).admission, Admission::queued);
  ASSERT_EQ(q.submit(1, b.job()).admission, Admission::queued);
  ASSERT_TRUE(a.started(1));
  ASSERT_TRUE(b.started(1));
  std::this_thread::sleep_for(50ms);  // a third thread is free: it must still not start lane 0's second
  EXPECT_EQ(a.count(), 1);
  const std::vector<RunQueue::LaneCounts> counts = q.counts();
  EXPECT_EQ(counts[0].running, 1u);
  EXPECT_EQ(counts[0].queued, 1u);
  EXPECT_EQ(counts[1].running, 1u);
  a.release();
  EXPECT_TRUE(a.started(2));
  b.release();
}

TEST(RunQueue, BeyondALanesBoundItIsLaneFullAndBeyondTheServersItIsServerFull) {
  Gate gate;
  RunQueue q(1, 2, {LaneConfig{.max_running = 1, .max_queued = 1}, LaneConfig{.max_queued = 10}});
  ASSERT_EQ(q.submit(0, gate.job()).admission, Admission::queued);
  ASSERT_TRUE(gate.started(1));
  EXPECT_EQ(q.submit(0, gate.job()).admission, Admission::queued);     // waits: 1 of lane 0's 1
  EXPECT_EQ(q.submit(0, gate.job()).admission, Admission::lane_full);  // the lane's bound
  EXPECT_EQ(q.submit(1, gate.job()).admission, Admission::queued);     // waits: 2 of the server's 2
  EXPECT_EQ(q.submit(1, gate.job()).admission, Admission::server_full);
  EXPECT_EQ(q.pending(), 3u);
  q.shutdown();
  EXPECT_EQ(q.submit(1, gate.job()).admission, Admission::stopped);
  gate.release();
}

TEST(RunQueue, AWithdrawnJobNeverRunsAndAStartedOneCannotBeWithdrawn) {
  Gate gate;
  std::atomic<bool> ran{false};
  RunQueue q(1, 10, {LaneConfig{}});
  const RunQueue::Ticket first = q.submit(0, gate.job());
  ASSERT_TRUE(gate.started(1));
  const RunQueue::Ticket second = q.submit(0, [&](RunQueue::Clock::duration) -> RunQueue::Then {
    ran = true;
    return {};
  });
  ASSERT_EQ(second.admission, Admission::queued);
  EXPECT_TRUE(q.withdraw(second.id));
  EXPECT_FALSE(q.withdraw(second.id));
  EXPECT_FALSE(q.withdraw(first.id));  // running
  EXPECT_EQ(q.counts()[0].queued, 0u);
  gate.release();
  std::promise<void> done;
  ASSERT_EQ(q.submit(0,
                     [&](RunQueue::Clock::duration) -> RunQueue::Then {
                       done.set_value();
                       return {};
                     })
                .admission,
            Admission::queued);
  EXPECT_EQ(done.get_future().wait_for(10s), std::future_status::ready);
  EXPECT_FALSE(ran.load());
}

TEST(RunQueue, AJobIsToldHowLongItWaited) {
  Gate gate;
  RunQueue q(1, 10, {LaneConfig{}});
  ASSERT_EQ(q.submit(0, gate.job()).admission, Admission::queued);
  ASSERT_TRUE(gate.started(1));
  std::promise<RunQueue::Clock::duration> waited;
  ASSERT_EQ(q.submit(0,
                     [&](RunQueue::Clock::duration d) -> RunQueue::Then {
                       waited.set_value(d);
                       return {};
                     })
                .admission,
            Admission::queued);
  std::this_thread::sleep_for(100ms);
  gate.release();
  EXPECT_GE(waited.get_future().get(), 100ms);
}

// A client that reads its answer and at once sends its next request finds the thread free, even with no
// queue at all: the answer (the job's Then) goes out only once the thread counts as free.
TEST(RunQueue, WhatAJobLeavesForLaterRunsOnceItsThreadIsFree) {
  RunQueue q(1, /*queue_limit=*/0, {LaneConfig{}});
  std::promise<Admission> next;
  const auto job = [&](RunQueue::Clock::duration) -> RunQueue::Then {
    return [&] {
      next.set_value(q.submit(0, [](RunQueue::Clock::duration) -> RunQueue::Then { return {}; }).admission);
    };
  };
  ASSERT_EQ(q.submit(0, job).admission, Admission::queued);
  std::future<Admission> admitted = next.get_future();
  ASSERT_EQ(admitted.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(admitted.get(), Admission::queued);
}

/// A stream that records what reaches the client.
class RecordingStream final : public ResponseStream {
 public:
  explicit RecordingStream(std::vector<std::string>& seen) : seen_(seen) {}
  void write(std::string bytes) override { seen_.push_back("write " + bytes); }
  void end() override { seen_.push_back("end"); }
  void end_with(std::string outcome, RequestFacts /*facts*/) override { seen_.push_back("end " + outcome); }
  [[nodiscard]] bool gone() const override { return false; }

 private:
  std::vector<std::string>& seen_;
};

// A streamed answer's lines go out as written; its end, and a plain answer, wait for the job's Then, and
// anything answered after that goes out at once.
TEST(HeldAnswer, HoldsTheAnswerAndAStreamsEndUntilThenRuns) {
  std::vector<std::string> seen;
  const Respond respond = [&](HttpResponse r) { seen.push_back("respond " + r.body); };
  const RespondStream stream = [&](HttpResponse /*head*/) { return std::make_shared<RecordingStream>(seen); };
  auto held = std::make_shared<HeldAnswer>(respond, stream);
  const std::shared_ptr<ResponseStream> out = held->stream()(HttpResponse{});
  out->write("line");
  out->end_with("ok", RequestFacts{});
  EXPECT_EQ(seen, std::vector<std::string>({"write line"}));
  RunQueue::Then then = held->then();
  held.reset();  // the Then alone keeps what it sends alive
  then();
  EXPECT_EQ(seen, std::vector<std::string>({"write line", "end ok"}));

  const auto later = std::make_shared<HeldAnswer>(respond, RespondStream());
  const Respond answer = later->respond();
  HttpResponse first;
  first.body = "one";
  answer(first);
  EXPECT_EQ(seen.size(), 2u);
  later->then()();
  HttpResponse second;
  second.body = "two";
  answer(second);  // after the release: at once
  EXPECT_EQ(seen, std::vector<std::string>({"write line", "end ok", "respond one", "respond two"}));
}

}  // namespace
}  // namespace skillbox::server
