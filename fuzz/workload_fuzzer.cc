// The workload parser in its three forms, then the estimator on what it accepts:
//   first byte % 3 == 0: a YAML or JSON workload file,
//                     1: command-line flags, one "key=value" per line (--set),
//                     2: a JSON object as a request or a --jsonl line sends it (model_config
//                        inline included).
// Any input gives a workload or an error naming the field; an accepted workload estimates on
// several hardware shapes without crashing, overflowing or dividing by zero (UBSan watches).
#include "cloudfit/estimate.h"
#include "cloudfit/hardware.h"
#include "cloudfit/workload.h"
#include "fuzz_support.h"
#include "util/validate.h"

using namespace cloudfit;

namespace {

void Set(Workload* w, const std::string& key, const std::string& value) {
  // A model_config path would be read from the disk: only the command line does that, and the
  // fuzzer must not wander the file system. Inline configs ('{...}') are fuzzed.
  if (key == "model_config" && value.find('{') == std::string::npos) return;
  (void)SetWorkloadField(w, key, value);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  std::string_view text = fuzz::AsText(data + 2, size - 2);
  Workload w;
  switch (data[0] % 3) {
    case 0: {
      std::vector<std::pair<std::string, std::string>> fields;
      if (!ParseWorkloadDocument(text, "fuzz.yaml", &fields).ok()) return 0;
      for (const auto& [k, v] : fields) Set(&w, k, v);
      break;
    }
    case 1: {
      size_t start = 0;
      while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(start, end - start);
        size_t eq = line.find('=');
        if (eq != std::string_view::npos) {
          Set(&w, std::string(line.substr(0, eq)), std::string(line.substr(eq + 1)));
        }
        start = end + 1;
      }
      break;
    }
    default: {
      nlohmann::json request;
      if (!ParseJson("line", text, kMaxJsonlLineBytes, &request).ok() || !request.is_object()) {
        return 0;
      }
      for (const auto& [key, value] : request.items()) {
        Set(&w, key, value.is_string() ? value.get<std::string>() : DumpJson(value));
      }
    }
  }
  if (!FinalizeWorkload(fuzz::BuiltIn(), &w).ok()) return 0;
  static const HardwareSpec kShapes[] = {
      {"A100", 1, "", 1, 0, std::nullopt},         {"H100", 8, "", 4, 0, std::nullopt},
      {"L4", 1, "", 1, 0, std::nullopt},           {"", 1, "p4d.24xlarge", 2, 0, std::nullopt},
      {"", 1, "c7i.12xlarge", 1, 0, std::nullopt}, {"T4", 4, "", 1, 0, std::nullopt}};
  constexpr size_t kShapeCount = sizeof(kShapes) / sizeof(kShapes[0]);
  HardwareSpec spec = kShapes[data[1] % kShapeCount];
  // The second byte also picks peer to peer between the GPUs of a node: unset (from the GPU),
  // on or off (host-staged copies, as on GeForce boards).
  if (size_t p2p = data[1] / kShapeCount % 3; p2p > 0) spec.peer_to_peer = p2p == 1;
  Hardware hw;
  if (!ResolveHardware(fuzz::BuiltIn(), spec, &hw).ok()) return 0;
  Estimate e;
  (void)EstimateWorkload(fuzz::BuiltIn(), w, hw, &e);
  return 0;
}
