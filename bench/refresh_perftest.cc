// How fast the AWS offer-file reader gets through a region's price list: the files are
// hundreds of megabytes to gigabytes, streamed, so the reader must keep up with the download.
// The input repeats the rows of tests/fixtures/refresh/aws/us-east-1.csv.
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>

#include "refresh/aws_offer_file.h"

namespace {

std::string Fixture() {
  std::ifstream in(std::string(CLOUDFIT_SOURCE_DIR) + "/tests/fixtures/refresh/aws/us-east-1.csv");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// About `target` bytes of offer file: the fixture's header, then its rows over and over.
std::string OfferFile(size_t target) {
  std::string fixture = Fixture();
  size_t header_end = fixture.find("\n\"8QDVAPVDDJF5CZSS\"");
  std::string head = fixture.substr(0, header_end + 1);
  std::string rows = fixture.substr(header_end + 1);
  std::string out = head;
  while (out.size() < target) out += rows;
  return out;
}

void BM_AwsOfferFileReader(benchmark::State& state) {
  std::string file = OfferFile(64 << 20);
  const size_t chunk = 1 << 16;  // libcurl hands over pieces of this order
  for (auto _ : state) {
    cloudfit::refresh::AwsOfferFileReader reader("bench", {"TermType", "PricePerUnit"});
    long rows = 0;
    reader.set_row_handler([&](const std::vector<std::string>& row, long) {
      rows += row.size() > 3;
    });
    for (size_t i = 0; i < file.size(); i += chunk) {
      reader.Feed(std::string_view(file).substr(i, chunk));
    }
    benchmark::DoNotOptimize(reader.Finish());
    benchmark::DoNotOptimize(rows);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * file.size()));
}
BENCHMARK(BM_AwsOfferFileReader)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
