// The built-in catalog's files plus an instances/synthetic.csv of `offers` rows (ten regions per
// type, GPU and CPU types in turn, every price mode), for benchmarks of how time grows with the
// catalog's size.
#ifndef CLOUDFIT_BENCH_SYNTHETIC_CATALOG_H_
#define CLOUDFIT_BENCH_SYNTHETIC_CATALOG_H_

#include "cloudfit/catalog.h"

namespace cloudfit {

CatalogFiles SyntheticOfferCatalog(int offers);

}  // namespace cloudfit

#endif  // CLOUDFIT_BENCH_SYNTHETIC_CATALOG_H_
