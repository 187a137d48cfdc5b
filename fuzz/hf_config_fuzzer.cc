// The Hugging Face config.json reader: any JSON gives a model or an error naming the field; an
// accepted model is estimated for inference and training without overflow (UBSan watches; widths
// above 2^29 used to overflow int).
#include "cloudfit/estimate.h"
#include "cloudfit/hardware.h"
#include "cloudfit/hf_config.h"
#include "cloudfit/workload.h"
#include "fuzz_support.h"
#include "util/validate.h"

using namespace cloudfit;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view text = fuzz::AsText(data + 1, size - 1);
  nlohmann::json config;
  if (!ParseJson("config.json", text, kMaxDocumentBytes, &config).ok()) return 0;
  Model m;
  if (!ModelFromHfConfig(config, "fuzz", &m).ok()) return 0;
  fuzz::Require(m.params > 0 && m.active_params > 0 && m.active_params <= m.params * (1 + 1e-9),
                "a model has parameters, the active ones among them");
  Workload w;
  w.kind = (data[0] & 1) ? WorkloadKind::kLora : WorkloadKind::kInference;
  w.model_config_json = std::string(text);
  if (!FinalizeWorkload(fuzz::BuiltIn(), &w).ok()) return 0;
  Hardware hw;
  HardwareSpec spec;
  spec.gpu = "H100";
  spec.gpus = (data[0] & 2) ? 8 : 1;
  if (!ResolveHardware(fuzz::BuiltIn(), spec, &hw).ok()) return 0;
  Estimate e;
  (void)EstimateWorkload(fuzz::BuiltIn(), w, hw, &e);
  return 0;
}
