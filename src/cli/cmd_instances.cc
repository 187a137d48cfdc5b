// cloudfit instances: filter and sort instance offers across every provider and region.
#include <iostream>
#include <map>
#include <memory>

#include "cli/cli_common.h"
#include "cloudfit/catalog_json.h"
#include "cloudfit/instance_query.h"
#include "util/date.h"
#include "util/validate.h"

namespace cloudfit::cli {

namespace {

struct InstancesOptions {
  InstanceQuery query;
  std::string pricing = "ondemand";
  FormatOptions format;
  // CLI11 fills plain doubles; ranges are assembled after parsing.
  std::optional<double> gpus_min, gpus_max, gpu_mem_min, gpu_mem_max, total_gpu_mem_min,
      total_gpu_mem_max, vcpus_min, vcpus_max, mem_min, mem_max, mem_per_vcpu_min, mem_per_vcpu_max,
      price_min, price_max;
};

void AddRange(CLI::App* c, const std::string& name, std::optional<double>* min,
              std::optional<double>* max, const std::string& what) {
  c->add_option("--" + name + "-min", *min, "Minimum " + what)->check(FiniteNumber());
  c->add_option("--" + name + "-max", *max, "Maximum " + what)->check(FiniteNumber());
}

TableCell PriceCell(const Offer& o) {
  return o.price_per_hour ? TableCell(FormatNumber(*o.price_per_hour, 4)) : TableCell::Unknown();
}

void Run(const GlobalOptions& global, InstancesOptions& options) {
  InstanceQuery& q = options.query;
  if (!ParsePricingMode(options.pricing, &q.pricing)) {
    throw CliError{"--pricing: '" + Shown(options.pricing) +
                   "' is not one of ondemand, spot, reserved-1y, reserved-3y"};
  }
  q.gpu_count = {options.gpus_min, options.gpus_max};
  q.gpu_memory_gib = {options.gpu_mem_min, options.gpu_mem_max};
  q.total_gpu_memory_gib = {options.total_gpu_mem_min, options.total_gpu_mem_max};
  q.vcpus = {options.vcpus_min, options.vcpus_max};
  q.memory_gib = {options.mem_min, options.mem_max};
  q.memory_per_vcpu_gib = {options.mem_per_vcpu_min, options.mem_per_vcpu_max};
  q.price_per_hour = {options.price_min, options.price_max};
  const Catalog& catalog = LoadKeptCatalogOrThrow(global);
  std::vector<Offer> offers;
  ThrowIfError(FindOffers(catalog, q, &offers));

  std::string mode(PricingModeName(q.pricing));
  if (options.format.json) {
    PrintJson(OffersToJson(offers, q.pricing));
    return;
  }
  // Prices are per hour in the row's currency (one currency with --currency).
  Table table({{"provider", "provider"},
               {"instance_type", "instance"},
               {"region", "region", false, 1},
               {"gpu", "gpu"},
               {"gpus", "gpus", true},
               {"gpu_memory_gib", "gpu GiB", true, 3},
               {"vcpus", "vcpus", true},
               {"memory_gib", "mem GiB", true, 2},
               {"price_per_hour", mode + "/h", true},
               {"currency", "cur", false, 4},
               {"as_of", "as of", false, 5}});
  // Offers share a few dates, each formatted once (fmt, ~1,500 instructions a date).
  std::map<int, std::string> dates;
  auto date = [&](const RegionPrice& r) -> std::string {
    if (!r.as_of_known()) return "unknown";
    auto [it, added] = dates.try_emplace(r.as_of_days);
    if (added) it->second = FormatIsoDate(r.as_of_days);
    return it->second;
  };
  for (const Offer& o : offers) {
    const InstanceType& t = *o.instance;
    table.AddRow({t.provider, t.name, o.region->region,
                  t.has_gpu() ? TableCell(t.gpu_name()) : TableCell::Unknown(),
                  t.has_gpu() ? FormatNumber(t.gpu_count, 3) : "0",
                  t.has_gpu() ? FormatNumber(t.gpu_memory_gib(), 1) : "0", std::to_string(t.vcpus),
                  FormatNumber(t.memory_gib(), 1), PriceCell(o), o.currency, date(*o.region)});
  }
  PrintTable(table, options.format);
  if (options.format.format() == OutputFormat::kTable) {
    std::cout << "(" << offers.size() << " offers; a price of '-' is not published, and never "
              << "ranked as free)\n";
  }
}

}  // namespace

void AddInstancesCommand(CLI::App* app, const GlobalOptions* global) {
  auto options = std::make_shared<InstancesOptions>();
  CLI::App* c = app->add_subcommand(
      "instances", "Filter and sort instance types and their prices across providers and regions");
  InstanceQuery& q = options->query;
  c->add_option("--provider", q.providers,
                "Providers (aws, azure, gcp, alibaba, tencent, lambda, ...)")
      ->delimiter(',');
  c->add_option("--region", q.regions, "Regions")->delimiter(',');
  c->add_option("--family", q.families, "Instance families (p4d, gn7i, ...)")->delimiter(',');
  c->add_option("--gpu", q.gpus, "GPU models, any of (names or aliases: A100-80GB, L4, ...)")
      ->delimiter(',');
  c->add_flag("--gpu-only", q.gpu_only, "Only instances with GPUs");
  c->add_flag("--cpu-only", q.cpu_only, "Only instances without GPUs");
  AddRange(c, "gpus", &options->gpus_min, &options->gpus_max, "GPUs per instance");
  AddRange(c, "gpu-memory", &options->gpu_mem_min, &options->gpu_mem_max, "memory per GPU, GiB");
  AddRange(c, "total-gpu-memory", &options->total_gpu_mem_min, &options->total_gpu_mem_max,
           "GPU memory per instance, GiB");
  AddRange(c, "vcpus", &options->vcpus_min, &options->vcpus_max, "vCPUs");
  AddRange(c, "memory", &options->mem_min, &options->mem_max, "memory, GiB");
  AddRange(c, "memory-per-vcpu", &options->mem_per_vcpu_min, &options->mem_per_vcpu_max,
           "memory per vCPU, GiB");
  AddRange(c, "price", &options->price_min, &options->price_max,
           "price per hour under --pricing, in --currency (USD if not given)");
  c->add_option("--arch", q.arch, "CPU architecture: x86_64 or arm64");
  c->add_option("--pricing", options->pricing, "ondemand, spot, reserved-1y or reserved-3y")
      ->capture_default_str();
  c->add_flag("--priced-only", q.priced_only, "Leave out offers whose price is unknown");
  c->add_option("--currency", q.currency, "Show prices in this currency (rates in currency.csv)");
  c->add_option("--sort", q.sort_by,
                "Sort key: price, provider, instance, region, gpu, gpus, "
                "gpu-memory, vcpus, memory, memory-per-vcpu, network, family")
      ->capture_default_str();
  c->add_flag("--desc", q.descending, "Sort in descending order");
  c->add_flag("--per-type", q.one_per_type,
              "One offer per instance type: its first region in sort order (cheapest by price)");
  c->add_option("--top", q.top, "Show only the first N offers")->check(WholeIn(0, 1000000));
  GroupOptions(c, kGroupPricing, {"--pricing", "--priced-only", "--currency"});
  GroupOptions(c, kGroupOutput, {"--sort", "--desc", "--per-type", "--top"});
  GroupOptions(c, kGroupFilters);
  AddFormatFlags(c, &options->format);
  c->callback([global, options]() { Run(*global, *options); });
}

}  // namespace cloudfit::cli
