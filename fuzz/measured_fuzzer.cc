// The --measured parser ("1.9 it/s on 1x A10"): linear in its input (std::regex overflowed the
// stack on 30 KB), any text parses or fails naming the part that is wrong. Names resolve
// against the small fixture catalog: the lookups are the same code, and quick.
#include "cloudfit/measured_calibration.h"
#include "fuzz_support.h"

using namespace cloudfit;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ThroughputMeasurement m;
  Status s = ParseThroughputMeasurement(fuzz::Fixture(), fuzz::AsText(data, size), &m);
  if (s.ok()) {
    fuzz::Require(m.value > 0, "a measured value is positive");
    fuzz::Require(m.hardware.nodes >= 1, "at least one node");
    fuzz::Require(!m.hardware.gpu.empty() || !m.hardware.instance.empty(), "hardware is named");
  } else {
    fuzz::Require(s.message().size() < 4096, "an error message stays short");
  }
  return 0;
}
