// Reading bench files back: JSON Lines, a JSON array, one object; llama-bench's fields
// and older ember files (samples_ns only, means only); every malformed input refused with
// the file and line it is on; files beyond each limit refused, naming it (a file larger
// than the limit without reading it whole); which fields configure and which measure;
// pooling many results as pooling them one by one does.
#include "tools/bench/bench_records.h"

#include <fcntl.h>
#include <unistd.h>

#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testing/testing.h"
#include "tools/bench/bench_report.h"

namespace ember::tools {
namespace {

std::string Message(const Status& s) { return s.ok() ? "ok" : s.message(); }

TEST(BenchRecordsTest, JsonLinesArrayAndSingleObject) {
  std::vector<BenchRecord> r;
  const std::string lines =
      "{\"test\":\"pp16\",\"n_prompt\":16,\"samples_ts\":[100,200,300]}\n"
      "\n"
      "{\"test\":\"tg8\",\"n_gen\":8,\"samples_ts\":[10,30]}\n";
  ASSERT_TRUE(ParseBenchRecords(lines, "a.jsonl", &r).ok());
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].where, "a.jsonl:1");
  EXPECT_EQ(r[1].where, "a.jsonl:3");  // the blank line counts
  EXPECT_DOUBLE_EQ(r[0].speed.mean, 200);
  EXPECT_DOUBLE_EQ(r[0].speed.stddev, 100);
  EXPECT_DOUBLE_EQ(r[0].speed.Median(), 200);
  EXPECT_DOUBLE_EQ(r[1].speed.Median(), 20);
  EXPECT_DOUBLE_EQ(r[1].speed.Min(), 10);
  EXPECT_DOUBLE_EQ(r[1].speed.Max(), 30);

  ASSERT_TRUE(ParseBenchRecords("[\n {\"test\": \"pp8\", \"samples_ts\": [5]},\n"
                                " {\"test\": \"tg4\", \"samples_ts\": [6]}\n]\n",
                                "b.json", &r)
                  .ok());
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[1].where, "b.json: result 2");
  ASSERT_TRUE(
      ParseBenchRecords("{\n  \"test\": \"pp8\",\n  \"avg_ts\": 5\n}\n", "c.json", &r)
          .ok());
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(r[0].speed.samples.empty());
}

TEST(BenchRecordsTest, OlderAndForeignFieldSets) {
  std::vector<BenchRecord> r;
  // llama-bench: no test field, samples_ns and samples_ts; a pp+tg test.
  ASSERT_TRUE(
      ParseBenchRecords("{\"n_prompt\":512,\"n_gen\":0,\"n_depth\":0,\"n_gpu_layers\":99,"
                        "\"samples_ns\":[1000000000],\"samples_ts\":[512]}\n"
                        "{\"n_prompt\":16,\"n_gen\":64,\"avg_ts\":50,\"stddev_ts\":2}\n",
                        "llama.jsonl", &r)
          .ok());
  EXPECT_EQ(TestLabel(r[0].fields), "pp512");
  EXPECT_EQ(TestLabel(r[1].fields), "pp16+tg64");
  EXPECT_DOUBLE_EQ(r[1].speed.mean, 50);
  EXPECT_DOUBLE_EQ(r[1].speed.Min(), 48);  // mean - stddev without samples
  // samples_ns only: tokens/s from the test's tokens.
  ASSERT_TRUE(
      ParseBenchRecords("{\"n_gen\":64,\"samples_ns\":[2e9,4e9]}", "old.jsonl", &r).ok());
  EXPECT_EQ(TestLabel(r[0].fields), "tg64");
  ASSERT_EQ(r[0].speed.samples.size(), 2u);
  EXPECT_DOUBLE_EQ(r[0].speed.samples[0], 32);
  EXPECT_DOUBLE_EQ(r[0].speed.samples[1], 16);
  EXPECT_EQ(FieldText(r[0].fields, "n_gen"), "64");
  EXPECT_EQ(FieldText(r[0].fields, "cpu_info"), "-");
}

TEST(BenchRecordsTest, BadInputNamesFileAndLine) {
  std::vector<BenchRecord> r;
  const std::string good = "{\"test\":\"pp8\",\"samples_ts\":[5]}\n";
  struct Case {
    std::string text, want;
  } cases[] = {
      {"", "x.jsonl: no results"},
      {"\n  \n", "x.jsonl: no results"},
      {"[]", "x.jsonl: no results"},
      {good + good + "{\"test\":\"pp8\",\"samples_ts\":[5]\n",
       "x.jsonl:3: not valid JSON: it ends early"},
      {good + "{\"test\": pp8}\n" + good,
       "x.jsonl:2: not valid JSON: column 10: syntax error"},
      {good + "[1,2]\n", "x.jsonl:2: a result must be a JSON object, not array"},
      {good + "{\"test\":\"pp8\"}\n",
       "x.jsonl:2: no tokens/s (samples_ts, samples_ns or avg_ts)"},
      {"{\"test\":\"pp8\",\"samples_ts\":[5,-1]}", "x.jsonl:1: 'samples_ts' holds -1"},
      {"{\"test\":\"pp8\",\"samples_ts\":[]}", "x.jsonl:1: 'samples_ts' is not a list"},
      {"{\"test\":\"pp8\",\"samples_ts\":\"fast\"}", "'samples_ts' is not a list"},
      {"{\"samples_ns\":[100]}", "x.jsonl:1: samples_ns without n_prompt or n_gen"},
      {"{\"avg_ts\":5}", "x.jsonl:1: no test (test, n_prompt or n_gen)"},
      {"{\"n_gen\":-3,\"avg_ts\":5}", "x.jsonl:1: 'n_gen' is -3, not a count"},
      {"[\n" + good + ",\n{\"test\": }\n]", "x.jsonl:4: not valid JSON"},
      {"[\n" + good + "]\n[", "x.jsonl:4: not valid JSON"},
      {good + "{\"test\":\"pp8\",\"samples_ts\":[1e999]}\n",
       "x.jsonl:2: not valid JSON: number overflow parsing '1e999'"},
      {"[{\"test\":\"pp8\",\"samples_ts\":[1e999]}]",
       "x.jsonl: not valid JSON: number overflow"},
      {"{\"test\":\"pp8\",\"samples_ts\":[1e300,1e300]}",
       "x.jsonl:1: 1e+300 tokens/s is out of range"},
      {"{\"n_gen\":8,\"samples_ns\":[1e-300]}",
       "x.jsonl:1: inf tokens/s is out of range"},
  };
  for (const Case& c : cases) {
    const Status s = ParseBenchRecords(c.text, "x.jsonl", &r);
    EXPECT_FALSE(s.ok()) << c.text;
    EXPECT_NE(Message(s).find(c.want), std::string::npos)
        << "input: " << c.text << "\nmessage: " << Message(s) << "\nwant: " << c.want;
  }
  const Status missing = ReadBenchRecords("/nonexistent/bench.jsonl", &r);
  EXPECT_NE(Message(missing).find("cannot open '/nonexistent/bench.jsonl'"),
            std::string::npos)
      << Message(missing);
}

// `count` lines of one result each: {"test":"pp8","n_threads":T,"samples_ts":[1,...]},
// T the line's index when `distinct` (a configuration each), else 1.
std::string Lines(size_t count, bool distinct, size_t samples_per_line = 1) {
  std::string samples = "1";
  for (size_t i = 1; i < samples_per_line; ++i) samples += ",1";
  std::string text;
  for (size_t i = 0; i < count; ++i) {
    text += "{\"test\":\"pp8\",\"n_threads\":" + std::to_string(distinct ? i : 1) +
            ",\"samples_ts\":[" + samples + "]}\n";
  }
  return text;
}

TEST(BenchRecordsTest, LimitsAreRefusedNamingThem) {
  std::vector<BenchRecord> r;
  const auto refused = [&](const std::string& text, const std::string& want) {
    const Status s = ParseBenchRecords(text, "x.jsonl", &r);
    EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << Message(s);
    EXPECT_NE(Message(s).find(want), std::string::npos)
        << "message: " << Message(s) << "\nwant: " << want;
  };
  const std::string good = "{\"test\":\"pp8\",\"samples_ts\":[5]}\n";
  // Bytes: one past the limit.
  std::string big = good;
  big.resize(kMaxBenchFileBytes + 1, '\n');
  refused(big, "x.jsonl: more than 67108864 bytes (64 MiB), the most a bench file may");
  big.clear();
  big.shrink_to_fit();
  // A line: at the limit it is read, one byte more is refused.
  std::string line = "{\"test\":\"pp8\",\"samples_ts\":[5],\"pad\":\"\"}";
  line.insert(line.size() - 2, kMaxBenchLineBytes - line.size(), 'a');
  ASSERT_EQ(line.size(), kMaxBenchLineBytes);
  EXPECT_TRUE(ParseBenchRecords(good + line + "\n", "x.jsonl", &r).ok());
  line.insert(line.size() - 2, "a");
  refused(good + line + "\n", "x.jsonl:2: a line of 1048577 bytes, more than 1048576");
  // Results: 100,000 are read; the next is refused, here or in an array.
  EXPECT_TRUE(ParseBenchRecords(Lines(kMaxBenchResults, false), "x.jsonl", &r).ok());
  EXPECT_EQ(r.size(), kMaxBenchResults);
  refused(Lines(kMaxBenchResults, false) + good,
          "x.jsonl:100001: more than 100000 results, the most a bench file may hold");
  std::string array = "[";
  for (size_t i = 0; i <= kMaxBenchResults; ++i) array += (i ? "," : "") + good;
  refused(array + "]", "x.jsonl: result 100001: more than 100000 results");
  // Samples in all: 2,000,000 in lines of 400,000.
  EXPECT_TRUE(ParseBenchRecords(Lines(5, false, 400000), "x.jsonl", &r).ok());
  refused(Lines(5, false, 400000) + good,
          "x.jsonl:6: more than 2000000 repetitions (samples) in all");
  // Field names: 256 in all (here 2 and 254 of a line's own), not 257.
  std::string fields;
  for (size_t i = 0; i < kMaxBenchFields - 2; ++i) {
    fields += "{\"test\":\"pp8\",\"samples_ts\":[5],\"f" + std::to_string(i) + "\":1}\n";
  }
  EXPECT_TRUE(ParseBenchRecords(fields, "x.jsonl", &r).ok());
  refused(fields + "{\"test\":\"pp8\",\"samples_ts\":[5],\"g\":1}\n",
          "x.jsonl:255: more than 256 field names in all");
  // Nesting: 32 deep is read; 33, or 500,000 (which overflowed the stack when the
  // record was copied), is refused, in JSON Lines or an array, brackets in strings aside.
  const auto nested = [](size_t depth) {
    return "{\"test\":\"pp8\",\"samples_ts\":[5],\"x\":" + std::string(depth - 1, '[') +
           "\"[[[\\\"[[\"" + std::string(depth - 1, ']') + "}";
  };
  EXPECT_TRUE(ParseBenchRecords(nested(kMaxBenchNesting) + "\n", "x.jsonl", &r).ok());
  refused(good + nested(kMaxBenchNesting + 1) + "\n",
          "x.jsonl:2: arrays and objects nested more than 32 deep");
  refused(good + nested(500000) + "\n", "x.jsonl:2: arrays and objects nested more");
  refused("[\n" + good + ",\n" + nested(kMaxBenchNesting) + "]",
          "x.jsonl:4: arrays and objects nested more than 32 deep");
}

TEST(BenchRecordsTest, LargerFilesAreNotReadWhole) {
  // A sparse file of 1 TiB: refused after reading one byte past the limit.
  testing::ScratchDir dir("ember_records_");
  const std::string path = dir.path() + "/huge.jsonl";
  const int fd = open(path.c_str(), O_CREAT | O_WRONLY, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, off_t{1} << 40), 0);
  close(fd);
  std::vector<BenchRecord> r;
  const Status s = ReadBenchRecords(path, &r);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(Message(s).find("huge.jsonl: more than 67108864 bytes (64 MiB)"),
            std::string::npos)
      << Message(s);
}

TEST(BenchRecordsTest, FieldRoles) {
  EXPECT_EQ(ClassifyBenchField("test"), BenchField::kTest);
  EXPECT_EQ(ClassifyBenchField("n_gen"), BenchField::kTest);
  EXPECT_EQ(ClassifyBenchField("model_sha256"), BenchField::kModel);
  EXPECT_EQ(ClassifyBenchField("model_filename"), BenchField::kModel);
  EXPECT_EQ(ClassifyBenchField("samples_ts"), BenchField::kMeasurement);
  EXPECT_EQ(ClassifyBenchField("test_time"), BenchField::kMeasurement);
  EXPECT_EQ(ClassifyBenchField("profile_matmul_pct"), BenchField::kMeasurement);
  // What it does not know configures the test: a new dimension needs no code here.
  EXPECT_EQ(ClassifyBenchField("n_threads"), BenchField::kConfig);
  EXPECT_EQ(ClassifyBenchField("n_depth"), BenchField::kConfig);
  EXPECT_EQ(ClassifyBenchField("isa_tier"), BenchField::kConfig);
  EXPECT_EQ(DescribeField("n_threads", "1"), "1 thread");
  EXPECT_EQ(DescribeField("n_threads", "4"), "4 threads");
  EXPECT_EQ(DescribeField("n_depth", "512"), "depth 512");
  EXPECT_EQ(DescribeField("isa_tier", "AVX2"), "isa_tier AVX2");
}

TEST(BenchRecordsTest, EveryFieldBenchWritesHasItsRole) {
  // What ember bench writes today, with --profile and --hash: the fields that configure a
  // test are exactly these. A new field lands here: a configuration field (a depth, a
  // tier) belongs in this list, a measurement in ClassifyBenchField's.
  BenchResult r;
  r.n_prompt = 8;
  r.samples_ns = {1000, 1100};
  r.has_profile = true;
  r.model_sha256 = "00";
  const BenchJson fields = BenchJson::parse(BenchJsonLine(r));
  std::vector<std::string> config;
  for (const auto& item : fields.items()) {
    if (ClassifyBenchField(item.key()) == BenchField::kConfig)
      config.push_back(item.key());
  }
  EXPECT_EQ(config,
            (std::vector<std::string>{"build_commit", "cpu_info", "backends", "n_batch",
                                      "n_threads", "type_k", "type_v", "use_mmap",
                                      "n_depth", "hwy_target", "int8_dot", "isa",
                                      "ember_version"}));
}

TEST(BenchRecordsTest, PooledSpeeds) {
  BenchSpeed a, b;
  a.samples = {1, 2, 3};
  b.samples = {4, 5};
  const BenchSpeed ab = BenchSpeed::Pool(a, b);
  EXPECT_EQ(ab.samples.size(), 5u);
  EXPECT_DOUBLE_EQ(ab.mean, 3);
  EXPECT_DOUBLE_EQ(ab.Median(), 3);
  BenchSpeed c;  // a mean only
  c.mean = 10;
  c.stddev = 0;
  a.mean = 2;
  a.stddev = 0;
  const BenchSpeed ac = BenchSpeed::Pool(a, c);
  EXPECT_TRUE(ac.samples.empty());
  EXPECT_DOUBLE_EQ(ac.mean, 6);
  EXPECT_DOUBLE_EQ(ac.stddev, 4);
}

TEST(BenchRecordsTest, PoolOfManyIsPoolOneByOne) {
  // Runs of results with samples, a mean only among them at times: the pool's figures
  // are Pool's, folded in order, to the bit.
  std::mt19937 rng(23);
  std::uniform_real_distribution<double> ts(50, 150);
  for (int trial = 0; trial < 300; ++trial) {
    BenchSpeedPool pool;
    BenchSpeed folded;
    const int results = 1 + static_cast<int>(rng() % 12);
    for (int i = 0; i < results; ++i) {
      BenchSpeed s;
      if (rng() % 5 == 0) {
        s.mean = ts(rng);
        s.stddev = ts(rng) / 50;
      } else {
        for (size_t k = 1 + rng() % 6; k > 0; --k) s.samples.push_back(ts(rng));
        s.mean = MeanOf(s.samples);
        s.stddev = SampleStdDev(s.samples);
      }
      pool.Add(s);
      folded = i == 0 ? s : BenchSpeed::Pool(folded, s);
    }
    const BenchSpeed got = pool.Take();
    ASSERT_EQ(got.samples, folded.samples) << trial;
    ASSERT_EQ(got.mean, folded.mean) << trial;
    ASSERT_EQ(got.stddev, folded.stddev) << trial;
  }
}

}  // namespace
}  // namespace ember::tools
