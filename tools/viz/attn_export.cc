// Attention weight exports (see attn_export.h).
#include "tools/viz/attn_export.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "runtime/model/atomic_file.h"

namespace ember::tools {

std::string CsvField(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string AttentionCsv(const AttentionRecord& record, const std::vector<int32_t>& ids,
                         const std::vector<std::string>& labels, bool causal) {
  std::string out = "layer,head,query,key,query_id,key_id,query_token,key_token,weight\n";
  const size_t rows = record.rows < ids.size() ? record.rows : ids.size();
  char line[128];
  for (size_t l = 0; l < record.num_layers; ++l) {
    for (size_t h = 0; h < record.num_heads; ++h) {
      for (size_t q = 0; q < rows; ++q) {
        const float* row = record.row(l, h, q);
        const size_t keys = causal ? q + 1 : rows;
        for (size_t k = 0; k < keys; ++k) {
          snprintf(line, sizeof(line), "%zu,%zu,%zu,%zu,%d,%d,", record.first_layer + l,
                   record.first_head + h, q, k, ids[q], ids[k]);
          out += line;
          out += CsvField(labels[q]) + "," + CsvField(labels[k]) + ",";
          snprintf(line, sizeof(line), "%.9g\n", row[k]);
          out += line;
        }
      }
    }
  }
  return out;
}

Status WriteOutput(const std::string& path, std::string_view bytes) {
  if (path != "-") return WriteFileAtomic(path, bytes.data(), bytes.size());
  const size_t written = fwrite(bytes.data(), 1, bytes.size(), stdout);
  if (written != bytes.size() || fflush(stdout) != 0) {
    return IoError("cannot write stdout: %s", strerror(errno));
  }
  return Status::Ok();
}

}  // namespace ember::tools
