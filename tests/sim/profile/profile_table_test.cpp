// Profile CSV from fake timings: the rows, the text, the atomic write, and ProfileCostModel
// reading it back with per-layer parts scaled by the layer count.
#include "sim/profile/profile_table.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "sim/cost/batch_shape.h"
#include "sim/cost/cost_error.h"
#include "sim/cost/presets.h"
#include "sim/cost/profile_cost_model.h"
#include "sim/profile/profile_command.h"

namespace pagesim::sim {
namespace {

// Fake timings with a known form per part, so lookups can be predicted exactly.
ProfileTimings fake_timings(const ProfileGrid& g, bool moe = false, bool dense = true) {
  ProfileTimings t;
  for (const std::int64_t n : g.linear_tokens) {
    if (dense) t.layer_linear.push_back(1e-5 + 1e-8 * static_cast<double>(n));
    if (moe) t.moe_layer_linear.push_back(4e-6 + 4e-9 * static_cast<double>(n));
  }
  for (const std::int64_t n : g.moe_tokens) t.moe_layer.push_back(3e-4 + 2e-7 * static_cast<double>(n));
  for (const PrefillComposition& c : g.prefill) t.layer_prefill.push_back(2e-6 + 1e-12 * c.pairs());
  for (const std::int64_t s : g.decode_seqs) {
    for (const std::int64_t c : g.decode_contexts) {
      t.layer_decode.push_back(3e-6 + 1e-10 * static_cast<double>(s) * static_cast<double>(c));
    }
  }
  for (const std::int64_t s : g.lm_head_seqs) t.lm_head.push_back(1e-4 + 1e-7 * static_cast<double>(s));
  for (const std::int64_t b : g.swap_blocks) {
    for (const std::int64_t bs : g.swap_block_sizes) {
      t.swap.push_back(5e-6 + 1e-8 * static_cast<double>(b) * static_cast<double>(bs));
    }
  }
  return t;
}

class TempPath {
 public:
  explicit TempPath(const std::string& name)
      : dir_(std::filesystem::temp_directory_path() / ("pagesim_profile_" + name + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(dir_);
  }
  ~TempPath() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::filesystem::path file(const std::string& n) const { return dir_ / n; }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

TEST(ProfileTable, RowsScalePerLayerParts) {
  const ModelSpec m = model_preset("opt-13b");
  const ProfileGrid g = make_profile_grid(m, {});
  const ProfileTimings t = fake_timings(g);
  const std::vector<ProfileRow> rows = profile_rows(m, g, t);
  EXPECT_EQ(rows.size(), g.num_points());
  EXPECT_EQ(rows.front().part, "linear");
  EXPECT_EQ(rows.front().x, 1);
  EXPECT_FALSE(rows.front().y.has_value());
  EXPECT_DOUBLE_EQ(rows.front().seconds, 40 * t.layer_linear[0]);
  for (const ProfileRow& r : rows) {
    if (r.part == "lm_head" && r.x == 1) {
      EXPECT_DOUBLE_EQ(r.seconds, t.lm_head[0]);  // a whole-model time: not scaled
    }
    if (r.part == "attn_decode" && r.x == 1 && r.y == 16) {
      EXPECT_DOUBLE_EQ(r.seconds, 40 * t.layer_decode[0]);
    }
    if (r.part == "swap" && r.x == 1 && r.y == 8) {
      EXPECT_DOUBLE_EQ(r.seconds, t.swap[0]);  // all layers already
    }
    EXPECT_EQ(r.y.has_value(), r.part == "attn_decode" || r.part == "swap") << r.part;
  }
}

TEST(ProfileTable, MismatchedTimingsAreRejected) {
  const ModelSpec m = model_preset("opt-13b");
  const ProfileGrid g = make_profile_grid(m, {});
  ProfileTimings t = fake_timings(g);
  t.layer_decode.pop_back();
  EXPECT_THROW(profile_rows(m, g, t), CostModelError);
  t = fake_timings(g);
  t.swap[3] = -1;
  EXPECT_THROW(profile_rows(m, g, t), CostModelError);
}

// Mixtral: every layer is an MoE layer, so linear is 32 x (qkv, o_proj) and moe 32 blocks.
TEST(ProfileTable, MoeModelRowsSplitLinearFromTheMoeBlocks) {
  const ModelSpec m = model_preset("mixtral-8x7b");
  const ProfileGrid g = make_profile_grid(m, {});
  const ProfileTimings t = fake_timings(g, true, false);
  const std::vector<ProfileRow> rows = profile_rows(m, g, t);
  EXPECT_EQ(rows.size(), g.num_points());
  std::size_t moe_rows = 0;
  for (const ProfileRow& r : rows) {
    if (r.part == "linear" && r.x == 8) {
      EXPECT_DOUBLE_EQ(r.seconds, 32 * (4e-6 + 4e-9 * 8));
    }
    if (r.part == "moe") {
      ++moe_rows;
      EXPECT_FALSE(r.y.has_value());
      EXPECT_DOUBLE_EQ(r.seconds, 32 * (3e-4 + 2e-7 * r.x));
    }
  }
  EXPECT_EQ(moe_rows, g.moe_tokens.size());
  // A dense layer's timings for a model with no dense layer are a mistake, as are missing ones.
  ProfileTimings wrong = fake_timings(g, true, true);
  EXPECT_THROW(profile_rows(m, g, wrong), CostModelError);
  wrong = fake_timings(g, true, false);
  wrong.moe_layer.pop_back();
  EXPECT_THROW(profile_rows(m, g, wrong), CostModelError);
  ProfileGrid no_moe = g;  // an MoE model's grid without moe points
  no_moe.moe_tokens.clear();
  wrong = fake_timings(no_moe, true, false);
  EXPECT_THROW(profile_rows(m, no_moe, wrong), CostModelError);
}

// Dense and MoE layers in one model: linear sums both kinds, each counted once.
TEST(ProfileTable, PartlyMoeModelCountsEveryLayerOnce) {
  ModelSpec m = model_preset("mixtral-8x7b");
  m.name = "half-moe";
  m.moe_layers = 12;  // 20 dense layers of ffn 14336, 12 MoE layers
  const ProfileGrid g = make_profile_grid(m, {});
  const ProfileTimings t = fake_timings(g, true, true);
  for (const ProfileRow& r : profile_rows(m, g, t)) {
    if (r.part == "linear" && r.x == 64) {
      EXPECT_DOUBLE_EQ(r.seconds, 20 * (1e-5 + 1e-8 * 64) + 12 * (4e-6 + 4e-9 * 64));
    }
    if (r.part == "moe" && r.x == 64) {
      EXPECT_DOUBLE_EQ(r.seconds, 12 * (3e-4 + 2e-7 * 64));
    }
  }
}

TEST(ProfileTable, MoeCsvReadsBackAndPricesTheMoeLayers) {
  const ModelSpec m = model_preset("mixtral-8x7b");
  ProfileGridOptions go;
  go.max_context = 4096;
  const ProfileGrid g = make_profile_grid(m, go);
  ProfileTable table;
  ProfileOptions o;
  o.model = "mixtral-8x7b";
  o.grid = go;
  table.comments = profile_header_comments(m, o, "Fake GPU (sm_90)", "2025-01-01T00:00:00Z", profile_command_line(o));
  table.rows = profile_rows(m, g, fake_timings(g, true, false));
  const std::string text = profile_csv_text(table);
  EXPECT_NE(text.find("\nmoe,1,,"), std::string::npos);
  EXPECT_NE(text.find("# moe: x = tokens; one MoE block x 32 MoE layers: 8 experts, top-2"), std::string::npos) << text;
  EXPECT_NE(text.find("32 MoE layers x (qkv 4096->6144, o_proj 4096->4096)"), std::string::npos) << text;
  TempPath tmp("moe_readback");
  const auto path = tmp.file("mixtral.csv");
  write_profile_csv(path, table);
  const ProfileCostModel cm(path);
  EXPECT_TRUE(cm.has_moe());
  EXPECT_NO_THROW(cm.check_model(m));
  EXPECT_THROW(cm.check_model(model_preset("llama-2-7b")), ProfileFormatError);
  BatchShape decode;
  for (int i = 0; i < 32; ++i) decode.add_decode_seq(1024);
  EXPECT_NEAR(cm.iteration_seconds(decode),
              32 * (4e-6 + 4e-9 * 32) + 32 * (3e-4 + 2e-7 * 32) + 32 * (3e-6 + 1e-10 * 32 * 1024) + (1e-4 + 1e-7 * 32),
              1e-9 * 32);
}

TEST(ProfileTable, CsvTextFormat) {
  ProfileTable table;
  table.comments = {"device: Fake GPU", ""};
  table.rows = {{"linear", 1, std::nullopt, 0.00125}, {"attn_decode", 32, 1024.0, 2.5e-5},
                {"attn_prefill", 2098176, std::nullopt, 1e-3}};
  EXPECT_EQ(profile_csv_text(table),
            "# device: Fake GPU\n#\npart,x,y,seconds\nlinear,1,,1.250000e-03\nattn_decode,32,1024,2.500000e-05\n"
            "attn_prefill,2098176,,1.000000e-03\n");
}

TEST(ProfileTable, WrittenCsvReadsBackThroughProfileCostModel) {
  for (const char* preset : {"opt-13b", "llama-3-8b"}) {
    const ModelSpec m = model_preset(preset);
    const ProfileGrid g = make_profile_grid(m, {});
    const ProfileTimings t = fake_timings(g);
    ProfileTable table;
    ProfileOptions o;
    o.model = preset;
    table.comments = profile_header_comments(m, o, "Fake GPU (sm_90)", "2025-01-01T00:00:00Z",
                                             profile_command_line(o));
    table.rows = profile_rows(m, g, t);
    TempPath tmp(std::string("readback_") + preset);
    const auto path = tmp.file("sub/profile.csv");  // parent folders are created
    write_profile_csv(path, table);
    ASSERT_TRUE(std::filesystem::exists(path));
    for (const auto& e : std::filesystem::directory_iterator(path.parent_path()))  // no temporary stays
      EXPECT_EQ(e.path().filename(), "profile.csv");
    std::ifstream in(path);
    std::string first;
    std::getline(in, first);
    EXPECT_EQ(first.rfind("# pagesim profile", 0), 0u) << first;

    const ProfileCostModel cm(path);
    EXPECT_TRUE(cm.has_lm_head());
    const double layers = static_cast<double>(m.layers);
    // A decode batch of 32 sequences of 1024 tokens: every part at a grid point.
    BatchShape decode;
    for (int i = 0; i < 32; ++i) decode.add_decode_seq(1024);
    EXPECT_NEAR(cm.iteration_seconds(decode),
                layers * (1e-5 + 1e-8 * 32) + layers * (3e-6 + 1e-10 * 32 * 1024) + (1e-4 + 1e-7 * 32),
                1e-9 * layers);
    // One 2048-token prompt (a grid point of attn_prefill): linear(2048) + attn + lm_head(1).
    BatchShape prefill;
    prefill.add_prefill_chunk(2048, 0, true);
    EXPECT_NEAR(cm.iteration_seconds(prefill),
                layers * (1e-5 + 1e-8 * 2048) + layers * (2e-6 + 1e-12 * 2048.0 * 2049 / 2) + (1e-4 + 1e-7),
                1e-9 * layers);
    // Between grid points everything is linear in these fakes, so interpolation is exact.
    BatchShape mid;
    for (int i = 0; i < 48; ++i) mid.add_decode_seq(768);
    EXPECT_NEAR(cm.iteration_seconds(mid),
                layers * (1e-5 + 1e-8 * 48) + layers * (3e-6 + 1e-10 * 48 * 768) + (1e-4 + 1e-7 * 48),
                2e-6 * layers);
    EXPECT_NEAR(cm.swap_seconds(64, 16), 5e-6 + 1e-8 * 64 * 16, 1e-12);
    EXPECT_NEAR(cm.swap_seconds(100, 16), 5e-6 + 1e-8 * 100 * 16, 1e-9);
  }
}

TEST(ProfileTable, HeaderCommentsNameDeviceDateCommandAndMethod) {
  const ModelSpec m = model_preset("llama-2-7b");
  ProfileOptions o;
  o.model = "llama-2-7b";
  o.out = "p.csv";
  o.repeats = 30;
  o.grid.block_size = 32;
  const std::string cmd = profile_command_line(o);
  EXPECT_EQ(cmd, "pagesim profile --device cuda --model llama-2-7b --out p.csv --repeats 30 --block-size 32");
  const std::vector<std::string> c = profile_header_comments(m, o, "NVIDIA H100", "2025-02-03T04:05:06Z", cmd);
  std::ostringstream all;
  for (const std::string& line : c) all << line << "\n";
  const std::string s = all.str();
  EXPECT_NE(s.find("device: NVIDIA H100"), std::string::npos) << s;
  EXPECT_NE(s.find("date: 2025-02-03T04:05:06Z"), std::string::npos) << s;
  EXPECT_NE(s.find("command: " + cmd), std::string::npos) << s;
  EXPECT_NE(s.find("median of 30 runs"), std::string::npos) << s;
  EXPECT_NE(s.find("x 32 layers"), std::string::npos) << s;
  EXPECT_NE(s.find("mlp_up 4096->22016"), std::string::npos) << s;  // gated: 2 x 11008
  EXPECT_NE(s.find("block size 32"), std::string::npos) << s;
  EXPECT_NE(s.find("524288 KV bytes per token"), std::string::npos) << s;  // 2 * 32 * 4096 * 2
  EXPECT_NE(s.find("host: GPU work only"), std::string::npos) << s;
  EXPECT_NE(s.find("cost.iteration_overhead_s"), std::string::npos) << s;
}

}  // namespace
}  // namespace pagesim::sim
