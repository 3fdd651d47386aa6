// Attention weights out of a session's record: the per-head matrices a heatmap draws,
// CSV rows (one per query/key pair a head may attend), and writing a file or stdout.
#ifndef EMBER_TOOLS_VIZ_ATTN_EXPORT_H_
#define EMBER_TOOLS_VIZ_ATTN_EXPORT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/attention_record.h"
#include "runtime/status.h"

namespace ember::tools {

// A field quoted as RFC 4180 asks when it holds a comma, quote, CR or LF (quotes
// doubled).
std::string CsvField(std::string_view text);

// Header "layer,head,query,key,query_id,key_id,query_token,key_token,weight", then one
// row per recorded (layer, head, query, key) with key <= query when `causal` (every key
// otherwise), for the first `record.rows` queries; weights to 9 significant digits.
std::string AttentionCsv(const AttentionRecord& record, const std::vector<int32_t>& ids,
                         const std::vector<std::string>& labels, bool causal);

// Writes `bytes` to `path` atomically (runtime/model/atomic_file.h), or to stdout for
// "-".
Status WriteOutput(const std::string& path, std::string_view bytes);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_VIZ_ATTN_EXPORT_H_
