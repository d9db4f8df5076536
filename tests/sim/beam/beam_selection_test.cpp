// vLLM's beam selection on hand-computed candidate sets: top-k over all (beam, token)
// pairs, survivors continue with their best chosen token, discarded beams pop outstanding
// candidates from the back, and the result comes out in Scheduler::reshape_beams' order.
#include "sim/beam/beam_selection.h"

#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <vector>

#include "allocator/paged/paged_allocator.h"
#include "sim/scheduler/scheduler.h"

namespace pagesim::sim {
namespace {

using Ints = std::vector<std::int32_t>;
using Doubles = std::vector<double>;

Ints ints(std::span<const std::int32_t> s) { return Ints(s.begin(), s.end()); }
Doubles doubles(std::span<const double> s) { return Doubles(s.begin(), s.end()); }

// k = 3. Candidates: beam 0: -0.1, -0.5, -3; beam 1: -1.2, -5, -6; beam 2: -2.3, -2.4, -8.
// Top 3: (0,t1) -0.1, (0,t2) -0.5, (1,t1) -1.2. Beam 2 is discarded and takes the
// outstanding (0,t2): it forks beam 0 with score -0.5.
TEST(BeamSelector, DiscardedBeamForksTheOutstandingCandidate) {
  BeamSelector sel;
  sel.select(Doubles{0, -1, -2}, Doubles{-0.1, -0.5, -3, -0.2, -4, -5, -0.3, -0.4, -6});
  EXPECT_EQ(ints(sel.slot_parents()), (Ints{0, 1, 0}));
  EXPECT_EQ(doubles(sel.slot_scores()), (Doubles{-0.1, -1.2, -0.5}));
  // reshape order: beam 0, its fork (slot 2), beam 1.
  EXPECT_EQ(ints(sel.parents()), (Ints{0, 0, 1}));
  EXPECT_EQ(doubles(sel.scores()), (Doubles{-0.1, -0.5, -1.2}));
}

// k = 4. Chosen in order: (0,t1) -1, (2,t1) -1.5, (0,t2) -2, (2,t2) -2.5; outstanding
// [(0,t2), (2,t2)]. Slot 1 pops the back, (2,t2); slot 3 then gets (0,t2).
TEST(BeamSelector, OutstandingCandidatesArePoppedFromTheBack) {
  BeamSelector sel;
  const Doubles scores{0, -10, -1, -10};
  const Doubles logprobs{-1, -2, -9, -9,        //
                         -1, -2, -3, -4,        //
                         -0.5, -1.5, -9, -9,    //
                         -1, -2, -3, -4};
  sel.select(scores, logprobs);
  EXPECT_EQ(ints(sel.slot_parents()), (Ints{0, 2, 2, 0}));
  EXPECT_EQ(doubles(sel.slot_scores()), (Doubles{-1, -2.5, -1.5, -2}));
  EXPECT_EQ(ints(sel.parents()), (Ints{0, 0, 2, 2}));
  EXPECT_EQ(doubles(sel.scores()), (Doubles{-1, -2, -1.5, -2.5}));
}

// The best beam takes every slot: the group collapses onto one hypothesis.
TEST(BeamSelector, OneBeamCanTakeEverySlot) {
  BeamSelector sel;
  sel.select(Doubles{0, -5, -6}, Doubles{-0.1, -0.2, -0.3, -1, -2, -3, -1, -2, -3});
  EXPECT_EQ(ints(sel.slot_parents()), (Ints{0, 0, 0}));
  // Slot 1 pops (0,t3), slot 2 then (0,t2).
  EXPECT_EQ(doubles(sel.slot_scores()), (Doubles{-0.1, -0.3, -0.2}));
  EXPECT_EQ(ints(sel.parents()), (Ints{0, 0, 0}));
  EXPECT_EQ(doubles(sel.scores()), (Doubles{-0.1, -0.3, -0.2}));
}

// Every beam's best token beats every second-best: nobody moves.
TEST(BeamSelector, SeparatedBeamsKeepTheirOwnTokens) {
  BeamSelector sel;
  sel.select(Doubles{-1, -2, -3}, Doubles{-0.1, -9, -9, -0.1, -9, -9, -0.1, -9, -9});
  EXPECT_EQ(ints(sel.parents()), (Ints{0, 1, 2}));
  EXPECT_EQ(doubles(sel.scores()), (Doubles{-1.1, -2.1, -3.1}));
}

// A certain model: after the first token, beams 1.. sit at -inf, and so does every token
// below rank 1. Ties go to the lower rank first, so each beam keeps its own hypothesis.
TEST(BeamSelector, TiesAtMinusInfinityKeepEveryBeam) {
  const double inf = std::numeric_limits<double>::infinity();
  BeamSelector sel;
  sel.select(Doubles{0, -inf, -inf}, Doubles{0, -inf, -inf, 0, -inf, -inf, 0, -inf, -inf});
  EXPECT_EQ(ints(sel.parents()), (Ints{0, 1, 2}));
  EXPECT_EQ(doubles(sel.scores()), (Doubles{0, -inf, -inf}));
  // Equal finite scores: the lower rank wins ((1,t1) -1 over (0,t2) -1) ...
  sel.select(Doubles{0, -1}, Doubles{-0.5, -1, 0, -3});
  EXPECT_EQ(ints(sel.parents()), (Ints{0, 1}));
  // ... then the lower beam ((0,t2) -2 over (1,t2) -2 for the third slot).
  sel.select(Doubles{0, 0, -5}, Doubles{-1, -2, -3, -1, -2, -3, -1, -2, -3});
  EXPECT_EQ(ints(sel.slot_parents()), (Ints{0, 1, 0}));
  EXPECT_EQ(ints(sel.parents()), (Ints{0, 0, 1}));
}

TEST(BeamSelector, WidthOne) {
  BeamSelector sel;
  sel.select(Doubles{-2}, Doubles{-0.25});
  EXPECT_EQ(ints(sel.parents()), (Ints{0}));
  EXPECT_EQ(doubles(sel.scores()), (Doubles{-2.25}));
}

// Records which old beam every sequence descends from.
class Lineage : public SequenceObserver {
 public:
  std::map<alloc::SeqId, alloc::SeqId> parent_of;
  void on_admitted(const Request&, alloc::SeqId) override {}
  void on_forked(const Request&, alloc::SeqId parent, alloc::SeqId child) override { parent_of[child] = parent; }
  void on_freed(alloc::SeqId) override {}
};

// Passing parents() to the real reshape_beams puts, at every position j of the new group, a
// sequence that descends from old beam parents()[j]: scores()[j] is that sequence's score.
TEST(BeamSelector, ParentsFollowReshapeBeamsOrder) {
  alloc::PagedAllocatorSettings as;
  as.num_blocks = 64;
  as.block_size = 4;
  alloc::PagedAllocator a(as);
  auto scheduler = make_scheduler(SchedulerSettings{}, a);
  Lineage lineage;
  scheduler->set_observer(&lineage);
  Request r;
  r.beam_width = 4;
  for (alloc::SeqId s = 100; s < 104; ++s) {
    alloc::AdmitRequest req;
    req.seq = s;
    req.prompt_tokens = 6;
    req.output_tokens = 4;
    ASSERT_TRUE(a.admit(req).admitted);
    r.seqs.push_back(a.handle(s));
  }
  const std::vector<alloc::SeqId> old = r.seq_ids();
  BeamSelector sel;
  sel.select(Doubles{0, -10, -1, -10}, Doubles{-1, -2, -9, -9, -1, -2, -3, -4, -0.5, -1.5, -9, -9, -1, -2, -3, -4});
  scheduler->reshape_beams(&r, ints(sel.parents()));
  ASSERT_EQ(r.seqs.size(), 4u);
  for (std::size_t j = 0; j < r.seqs.size(); ++j) {
    const alloc::SeqId s = r.seqs[j].id;
    const alloc::SeqId origin = lineage.parent_of.count(s) ? lineage.parent_of[s] : s;
    EXPECT_EQ(origin, old[static_cast<std::size_t>(sel.parents()[j])]) << "position " << j;
  }
  EXPECT_FALSE(a.contains(101));
  EXPECT_FALSE(a.contains(103));
  for (alloc::SeqId s : r.seq_ids()) a.free(s);
  a.validate();
  EXPECT_EQ(a.num_sequences(), 0);
}

}  // namespace
}  // namespace pagesim::sim
