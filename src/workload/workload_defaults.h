// The defaults a practitioner would set for what a workload leaves out, each recorded as an
// Assumption: batch and sequence length from the model's published recipe, the amount of work
// by a stated rule, the input pipeline's rate from the data type, and each kind's own defaults.
#ifndef CLOUDFIT_WORKLOAD_WORKLOAD_DEFAULTS_H_
#define CLOUDFIT_WORKLOAD_WORKLOAD_DEFAULTS_H_

#include "cloudfit/catalog.h"
#include "cloudfit/workload.h"

namespace cloudfit {

// Called by FinalizeWorkload once the model is resolved. Conflicting amounts of work (tokens
// that disagree with epochs x dataset_samples, steps beside tokens) are errors naming both.
Status ApplyWorkloadDefaults(const Catalog& catalog, Workload* w);

// The amount-of-work rule alone, for tests and the docs (docs/answers.md states it):
//   steps                      optimizer steps, alone
//   tokens | samples           the total processed (they must agree: samples x seq_len)
//   epochs x dataset_samples   samples; with tokens too, they must agree
//   epochs x tokens            tokens is one epoch's size (no dataset_samples)
//   dataset_samples alone      one epoch
//   nothing                    1,000 steps (training) or 10,000 samples (inference), assumed
Status ResolveAmountOfWork(Workload* w);

}  // namespace cloudfit

#endif  // CLOUDFIT_WORKLOAD_WORKLOAD_DEFAULTS_H_
