"""Building blocks of an operator mix: a feature-map shape, and Net, which collects the rows
of one model in forward order, aggregates identical rows with `repeats` and counts parameters.
Every layer helper states what the reference kernels read and write per sample."""

from dataclasses import dataclass

FLOP_KINDS = {"gemm", "conv", "gemm_sequential", "gemm_step", "attention", "depthwise"}
MEMORY_KINDS = {"norm", "activation", "elementwise", "softmax", "pooling", "resize",
                "embedding", "loss", "lstm_cell"}
# Calls that launch no kernel (select, squeeze, transpose, a weight's t()): host dispatch only;
# read/written name the whole tensor and the slice where the call selects one step of it.
VIEW_KINDS = {"view"}
TRAINING_ONLY = "training only: "  # notes prefix of rows that inference skips (dropout, ...)
UNFUSED_ONLY = "unfused attention only: "  # notes prefix of rows a fused attention kernel removes


@dataclass(frozen=True)
class Map:
    """Activations of one sample: channels x height x width; a sequence of h positions has w 1."""
    c: int
    h: int
    w: int = 1

    @property
    def e(self):
        return self.c * self.h * self.w


def conv_out(size, k, s, p, d=1):
    """Output length of a convolution or pooling window (PyTorch's formula)."""
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


class Net:
    """The operator rows of one model, in forward order, with identical rows aggregated."""

    def __init__(self, model, source, sample, units=1, unit=""):
        self.model = model
        self.source = source
        self.sample = sample  # what one sample is: the notes of the first row
        self.units = units  # models.csv counts gflops_per_sample per this many units
        self.unit = unit
        self.rows = []
        self.by_key = {}
        self.params = 0

    # -- rows -------------------------------------------------------------------------------
    def row(self, op, kind, spatial=True, m=0, n=0, k=0, groups=1, read=0, written=0,
            repeats=1, source=None, notes="", in_place=False, freed=False, index_bytes=0):
        assert kind in FLOP_KINDS | MEMORY_KINDS | VIEW_KINDS, kind
        assert not (in_place and freed), op
        values = dict(model=self.model, op=op, kind=kind, spatial="yes" if spatial else "no",
                      groups=int(groups), m=int(m), n=int(n), k=int(k),
                      read_elements=int(read), written_elements=int(written),
                      in_place="yes" if in_place else "", freed="yes" if freed else "",
                      saved_index_bytes=index_bytes or "", source=source or self.source,
                      notes=notes)
        key = tuple(values.items())
        if key in self.by_key:
            self.by_key[key]["repeats"] += repeats
        else:
            values["repeats"] = repeats
            self.by_key[key] = values
            self.rows.append(values)

    # freed: every reader of the row's output saves nothing of it for backward (a residual add,
    # a copy, a concatenation, an identity dropout, a loss's log-softmax, which keeps its own
    # result), so autograd frees it once they have run and training memory leaves it out. A
    # Linear or convolution saves its input, a norm its input, GELU and SiLU their input, ReLU
    # and softmax their result (torch/csrc/autograd derivatives.yaml): an output read by one of
    # those is kept.
    def mem(self, kind, op, read, written, spatial=True, repeats=1, notes="", in_place=False,
            freed=False):
        self.row(op, kind, spatial, read=read, written=written, repeats=repeats, notes=notes,
                 in_place=in_place, freed=freed)

    def maxpool(self, op, read, written, repeats=1, notes=""):
        """Max pooling in training: max_pool2d_with_indices writes, and saves for backward, the
        int64 index of each maximum beside its output (8 bytes per output element, whatever
        the activation dtype)."""
        self.row(op, "pooling", True, read=read, written=written, repeats=repeats, notes=notes,
                 index_bytes=8)

    def flops(self):
        return sum(2 * r["m"] * r["n"] * r["k"] * r["groups"] * r["repeats"]
                   for r in self.rows if r["kind"] in FLOP_KINDS)

    # -- layers (each counts its parameters once per call) ----------------------------------
    def conv(self, op, x, cout, k, s=1, p=None, groups=1, bias=False, d=1, dims=2, notes="",
             freed=False):
        """A k x k convolution (k x 1 over a sequence when dims == 1) as an implicit GEMM."""
        p = (k - 1) // 2 * d if p is None else p
        kw = k if dims == 2 else 1
        y = Map(cout, conv_out(x.h, k, s, p, d), conv_out(x.w, k, s, p, d) if dims == 2 else 1)
        kind = "depthwise" if groups > 1 and groups == x.c else "conv"
        self.row(op, kind, dims == 2, m=y.h * y.w, n=cout // groups, k=x.c // groups * k * kw,
                 groups=groups, read=x.e, written=y.e, notes=notes, freed=freed)
        self.params += cout * (x.c // groups) * k * kw + (cout if bias else 0)
        return y

    def linear(self, op, tokens, cin, cout, bias=True, spatial=False, kind="gemm", repeats=1,
               read=None, notes="", freed=False):
        """A dense layer over `tokens` rows of one sample; repeats share the weights."""
        self.row(op, kind, spatial, m=tokens, n=cout, k=cin,
                 read=tokens * cin if read is None else read, written=tokens * cout,
                 repeats=repeats, notes=notes, freed=freed)
        self.params += cin * cout + (cout if bias else 0)

    def norm(self, op, x, affine=True, spatial=True, notes="", freed=False):
        self.mem("norm", op, x.e, x.e, spatial, notes=notes, freed=freed)
        self.params += 2 * x.c if affine else 0

    # in_place: the reference code writes the result into its input's storage and its backward
    # needs nothing the write destroys: ReLU(inplace=True), whose gradient reads its result, and
    # `out += identity`. Such a row keeps no tensor of its own for the backward pass. (An
    # in-place op whose gradient reads its input, such as SiLU(inplace=True), gets a saved copy
    # of that input from autograd, so writing in place saves no memory; it is not marked.)
    def act(self, op, x, spatial=True, repeats=1, notes="", in_place=False, freed=False):
        self.mem("activation", op, x.e, x.e, spatial, repeats, notes, in_place, freed)

    def add(self, op, x, spatial=True, repeats=1, notes="", in_place=False):
        self.mem("elementwise", op, 2 * x.e, x.e, spatial, repeats, notes, in_place)

    def dropout(self, op, x, spatial=True, repeats=1, freed=False):
        self.mem("elementwise", op, x.e, x.e, spatial, repeats,
                 TRAINING_ONLY + "dropout (writes a mask too); identity at inference", freed=freed)

    def loss(self, op, read, written, spatial=False, notes="", classes=0):
        """classes: the length of each row a softmax cross-entropy normalises, as `n` (0 for a
        loss over short rows or none); PyTorch reads a row longer than 1,024 three times."""
        self.row(op, "loss", spatial, n=classes, read=read, written=written,
                 notes=TRAINING_ONLY + notes)

    def attention(self, prefix, heads, tq, tk, head_dim, spatial=True, repeats=1, notes=""):
        """Score and value matmuls of one attention, and the softmax a fused kernel hides."""
        self.row(f"{prefix} scores QK^T", "attention", spatial, m=tq, n=tk, k=head_dim,
                 groups=heads, read=(tq + tk) * heads * head_dim, written=heads * tq * tk,
                 repeats=repeats, notes=notes)
        self.mem("softmax", f"{prefix} softmax", heads * tq * tk, heads * tq * tk, spatial,
                 repeats, UNFUSED_ONLY + "the score matrix; a fused (Flash/SDPA) kernel keeps "
                 "it on chip")
        self.row(f"{prefix} scores x V", "attention", spatial, m=tq, n=head_dim, k=tk,
                 groups=heads, read=heads * tq * tk + tk * heads * head_dim,
                 written=tq * heads * head_dim, repeats=repeats, notes=notes)


def make_divisible(v, divisor=8):
    """torchvision's and Ultralytics' channel rounding: nearest multiple of 8, not below 90%."""
    new_v = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return new_v + divisor if new_v < 0.9 * v else new_v
