// bench-compare's pairing: what two files differ in is held apart, what varies pairs;
// results without a partner are listed; repeated configurations pool; files with other
// field sets (llama-bench's, an older ember's) still pair; --ignore; no pair at all is an
// error; the outputs carry the figures; and thousands of results and configurations pool
// and pair as a few do.
#include "tools/bench/bench_compare.h"

#include <cstdio>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ember::tools {
namespace {

// A result of `test` at `threads` with five samples around `ts` (spread 1 %).
BenchRecord Result(const std::string& model, int threads, const std::string& test,
                   double ts, const std::string& commit) {
  BenchJson j;
  j["build_commit"] = commit;
  j["cpu_info"] = "Test CPU";
  j["model_filename"] = model;
  j["n_threads"] = threads;
  j["n_prompt"] = test[0] == 'p' ? std::stoi(test.substr(2)) : 0;
  j["n_gen"] = test[0] == 't' ? std::stoi(test.substr(2)) : 0;
  j["test_time"] = "2026-11-25T00:00:00Z";
  j["samples_ts"] = {ts * 0.99, ts * 1.005, ts, ts * 1.01, ts * 0.995};
  j["test"] = test;
  BenchRecord r;
  EXPECT_TRUE(MakeBenchRecord(j, model + " " + test, &r).ok());
  return r;
}

TEST(BenchCompareTest, PairsByTestAndWhatVaries) {
  std::vector<BenchRecord> old_run, new_run;
  for (const char* model : {"a.ember", "b.ember"}) {
    for (int threads : {1, 2}) {
      old_run.push_back(Result(model, threads, "pp16", 1000 * threads, "aaaa"));
      old_run.push_back(Result(model, threads, "tg8", 100 * threads, "aaaa"));
      // a's decode 1.25 x faster; everything else the same.
      const double f = std::string(model) == "a.ember" ? 1.25 : 1.0;
      new_run.push_back(Result(model, threads, "pp16", 1000 * threads, "bbbb"));
      new_run.push_back(Result(model, threads, "tg8", 100 * threads * f, "bbbb"));
    }
  }
  old_run.push_back(Result("c.ember", 1, "tg8", 50, "aaaa"));  // only in OLD
  new_run.push_back(Result("a.ember", 4, "tg8", 50, "bbbb"));  // only in NEW
  Comparison c;
  ASSERT_TRUE(
      CompareBenchRecords(old_run, new_run, "old", "new", CompareOptions(), &c).ok());
  ASSERT_EQ(c.differences.size(), 1u);
  EXPECT_EQ(c.differences[0].field, "build_commit");
  EXPECT_EQ(c.differences[0].old_value, "aaaa");
  EXPECT_EQ(c.differences[0].new_value, "bbbb");
  EXPECT_EQ(c.columns, (std::vector<std::string>{"model_filename", "n_threads"}));
  ASSERT_EQ(c.pairs.size(), 8u);
  for (const ComparedPair& p : c.pairs) {
    const bool faster = p.key[0] == "a.ember" && p.test == "tg8";
    EXPECT_NEAR(p.estimate.ratio, faster ? 1.25 : 1.0, 1e-12)
        << p.key[0] << " " << p.test;
    EXPECT_EQ(p.estimate.change, faster ? 1 : 0) << p.key[0] << " " << p.test;
  }
  ASSERT_EQ(c.only_old.size(), 1u);
  EXPECT_EQ(c.only_old[0].key, (std::vector<std::string>{"c.ember", "1"}));
  ASSERT_EQ(c.only_new.size(), 1u);
  EXPECT_EQ(c.only_new[0].key, (std::vector<std::string>{"a.ember", "4"}));
  // --min-change 30 %: the 25 % change is no longer marked.
  CompareOptions coarse;
  coarse.min_change = 0.30;
  ASSERT_TRUE(CompareBenchRecords(old_run, new_run, "old", "new", coarse, &c).ok());
  for (const ComparedPair& p : c.pairs) EXPECT_EQ(p.estimate.change, 0);
}

TEST(BenchCompareTest, TwoModelsAreWhatIsCompared) {
  // q8 against q4 of one model: the file name differs throughout, so it is held apart
  // and the tests pair; repeated runs of one configuration pool their samples.
  std::vector<BenchRecord> q8 = {Result("m-q8.ember", 1, "tg8", 100, "c"),
                                 Result("m-q8.ember", 1, "tg8", 100, "c")};
  std::vector<BenchRecord> q4 = {Result("m-q4.ember", 1, "tg8", 150, "c")};
  Comparison c;
  ASSERT_TRUE(CompareBenchRecords(q8, q4, "q8", "q4", CompareOptions(), &c).ok());
  ASSERT_EQ(c.pairs.size(), 1u);
  EXPECT_EQ(c.pairs[0].old_side.results, 2);
  EXPECT_EQ(c.pairs[0].old_side.speed.samples.size(), 10u);
  EXPECT_NEAR(c.pairs[0].estimate.ratio, 1.5, 1e-12);
  EXPECT_EQ(c.pairs[0].estimate.change, 1);
  ASSERT_EQ(c.differences.size(), 1u);
  EXPECT_EQ(c.differences[0].field, "model_filename");
}

TEST(BenchCompareTest, OtherFieldSetsStillPair) {
  // llama-bench's records: no test field, fields ember lacks; means only on one side.
  BenchJson llama;
  llama["model_filename"] = "m.gguf";
  llama["n_threads"] = 2;
  llama["n_gpu_layers"] = 0;
  llama["n_prompt"] = 0;
  llama["n_gen"] = 8;
  llama["avg_ts"] = 80.0;
  llama["stddev_ts"] = 0.8;
  BenchRecord old_record;
  ASSERT_TRUE(MakeBenchRecord(llama, "llama:1", &old_record).ok());
  const std::vector<BenchRecord> new_run = {Result("m.ember", 2, "tg8", 100, "x"),
                                            Result("m.ember", 2, "pp16", 900, "x")};
  Comparison c;
  ASSERT_TRUE(
      CompareBenchRecords({old_record}, new_run, "llama", "ember", CompareOptions(), &c)
          .ok());
  ASSERT_EQ(c.pairs.size(), 1u);
  EXPECT_EQ(c.pairs[0].test, "tg8");
  EXPECT_FALSE(c.pairs[0].estimate.from_samples);
  EXPECT_NEAR(c.pairs[0].estimate.ratio, 100.0 * 1.0 / 80, 1e-3);  // mean over mean
  EXPECT_EQ(c.only_old_fields, (std::vector<std::string>{"n_gpu_layers"}));
  EXPECT_EQ(c.only_new.size(), 1u);  // pp16
  bool held_apart = false;
  for (const FieldChange& d : c.differences) held_apart |= d.field == "model_filename";
  EXPECT_TRUE(held_apart);
}

TEST(BenchCompareTest, NoPairIsAnError) {
  const std::vector<BenchRecord> a = {Result("m.ember", 1, "pp16", 100, "c"),
                                      Result("m.ember", 2, "pp16", 100, "c")};
  const std::vector<BenchRecord> b = {Result("m.ember", 4, "pp16", 100, "c"),
                                      Result("m.ember", 8, "pp16", 100, "c")};
  Comparison c;
  const Status s = CompareBenchRecords(a, b, "a.jsonl", "b.jsonl", CompareOptions(), &c);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message())
                .find("no result of a.jsonl pairs with one of b.jsonl "
                      "(paired on the test and n_threads)"),
            std::string::npos)
      << s.message();
  // --ignore n_threads pairs them anyway (the first of each).
  CompareOptions ignore;
  ignore.ignore = {"n_threads"};
  ASSERT_TRUE(CompareBenchRecords(a, b, "a.jsonl", "b.jsonl", ignore, &c).ok());
  EXPECT_EQ(c.pairs.size(), 1u);
  EXPECT_EQ(c.pairs[0].old_side.results, 2);
}

TEST(BenchCompareTest, ThousandsPoolAndPair) {
  // 3,000 configurations (thread counts) in each file, NEW's in reverse order, and one
  // configuration repeated 20,000 times (a history of single repetitions).
  std::vector<BenchRecord> old_run, new_run;
  BenchSpeed pooled;  // what Pool gives results that all have samples
  for (int i = 0; i < 20000; ++i) {
    BenchJson j = Result("m.ember", 0, "tg8", 100, "a").fields;
    j["samples_ts"] = {100 + i % 7};
    BenchRecord r;
    ASSERT_TRUE(MakeBenchRecord(j, "old", &r).ok());
    pooled.samples.push_back(r.speed.samples[0]);
    old_run.push_back(r);
  }
  for (int threads = 1; threads <= 3000; ++threads) {
    old_run.push_back(Result("m.ember", threads, "tg8", 100 * threads, "a"));
    new_run.push_back(
        Result("m.ember", 3001 - threads, "tg8", 110 * (3001 - threads), "b"));
  }
  new_run.push_back(Result("m.ember", 0, "tg8", 100, "b"));
  Comparison c;
  ASSERT_TRUE(
      CompareBenchRecords(old_run, new_run, "old", "new", CompareOptions(), &c).ok());
  ASSERT_EQ(c.pairs.size(), 3001u);
  EXPECT_TRUE(c.only_old.empty());
  EXPECT_TRUE(c.only_new.empty());
  const ComparedPair& history = c.pairs[0];
  EXPECT_EQ(history.key, (std::vector<std::string>{"0"}));
  EXPECT_EQ(history.old_side.results, 20000);
  EXPECT_EQ(history.old_side.speed.samples, pooled.samples);
  EXPECT_EQ(history.old_side.speed.mean, MeanOf(pooled.samples));
  EXPECT_EQ(history.old_side.speed.stddev, SampleStdDev(pooled.samples));
  for (size_t i = 1; i < c.pairs.size(); ++i) {
    ASSERT_EQ(c.pairs[i].key, (std::vector<std::string>{std::to_string(i)}));
    EXPECT_NEAR(c.pairs[i].estimate.ratio, 1.1, 1e-12) << i;
    EXPECT_EQ(c.pairs[i].new_side.results, 1);
  }
}

TEST(BenchCompareTest, ConfigurationsAreBounded) {
  // 10,000 thread counts pair; one more is refused, naming the limit and --ignore, which
  // pools them into one configuration again.
  std::vector<BenchRecord> many, one = {Result("m.ember", 1, "tg8", 100, "b")};
  for (int threads = 1; threads <= 10001; ++threads) {
    many.push_back(Result("m.ember", threads, "tg8", 100, "a"));
  }
  Comparison c;
  const Status s =
      CompareBenchRecords(many, one, "a.jsonl", "b.jsonl", CompareOptions(), &c);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(
      std::string(s.message())
          .find("m.ember tg8: more than 10000 configurations (of the test and "
                "n_threads), the most bench-compare pairs in a file: --ignore FIELD"),
      std::string::npos)
      << s.message();
  many.pop_back();
  EXPECT_TRUE(
      CompareBenchRecords(many, one, "a.jsonl", "b.jsonl", CompareOptions(), &c).ok());
  EXPECT_EQ(c.only_old.size(), 9999u);
  many.push_back(Result("m.ember", 10001, "tg8", 100, "a"));
  CompareOptions ignore;
  ignore.ignore = {"n_threads"};
  ASSERT_TRUE(CompareBenchRecords(many, one, "a.jsonl", "b.jsonl", ignore, &c).ok());
  ASSERT_EQ(c.pairs.size(), 1u);
  EXPECT_EQ(c.pairs[0].old_side.results, 10001);
}

TEST(BenchCompareTest, OutputsCarryTheFigures) {
  const std::vector<BenchRecord> a = {Result("m.ember", 1, "tg8", 100, "a")};
  const std::vector<BenchRecord> b = {Result("m.ember", 1, "tg8", 120, "b")};
  Comparison c;
  ASSERT_TRUE(CompareBenchRecords(a, b, "a.jsonl", "b.jsonl", CompareOptions(), &c).ok());
  auto text = [&](CompareFormat format) {
    char* buf = nullptr;
    size_t size = 0;
    FILE* f = open_memstream(&buf, &size);
    WriteComparison(c, format, f);
    fclose(f);
    std::string s(buf, size);
    free(buf);
    return s;
  };
  const std::string md = text(CompareFormat::kMarkdown);
  EXPECT_NE(md.find("- build_commit: a → b"), std::string::npos) << md;
  EXPECT_NE(md.find("| tg8  |"), std::string::npos) << md;
  EXPECT_NE(md.find("**+20.0 % faster**"), std::string::npos) << md;
  EXPECT_NE(md.find("Mann-Whitney"), std::string::npos);
  const BenchJson json = BenchJson::parse(text(CompareFormat::kJson));
  EXPECT_NEAR(json["pairs"][0]["ratio"].get<double>(), 1.2, 1e-12);
  EXPECT_EQ(json["pairs"][0]["change"], "faster");
  EXPECT_EQ(json["pairs"][0]["old"]["repetitions"], 5);
  EXPECT_NEAR(json["pairs"][0]["p_value"].get<double>(), 2.0 / 252, 1e-12);
  const std::string csv = text(CompareFormat::kCsv);
  EXPECT_EQ(
      csv.substr(0, csv.find('\n')),
      "status,test,old_median_ts,old_repetitions,new_median_ts,new_repetitions,ratio,"
      "ratio_low,ratio_high,confidence,p_value,method,change");
  EXPECT_NE(csv.find("paired,tg8,100,5,120,5,1.2,"), std::string::npos) << csv;
  const std::string svg = text(CompareFormat::kSvg);
  EXPECT_NE(svg.find("<g class=\"row\" id=\"row-0\" data-ratio=\"1.200000\">"),
            std::string::npos);
}

}  // namespace
}  // namespace ember::tools
