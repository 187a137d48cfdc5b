"""Operator mixes of the diffusion denoisers as diffusers builds them: UNet2DConditionModel for
Stable Diffusion 1.x and SDXL (from the unet/config.json of each checkpoint) and
FluxTransformer2DModel for FLUX.1-dev. One sample is one denoiser evaluation of one image."""

from .net import Map, Net

SD15_CONFIG = ("https://huggingface.co/stable-diffusion-v1-5/stable-diffusion-v1-5/blob/main/"
               "unet/config.json")
SD14_CONFIG = "https://huggingface.co/CompVis/stable-diffusion-v1-4/blob/main/unet/config.json"
SDXL_CONFIG = ("https://huggingface.co/stabilityai/stable-diffusion-xl-base-1.0/blob/main/"
               "unet/config.json")
FLUX_CODE = ("huggingface/diffusers@004f1e8c318c:"
             "src/diffusers/models/transformers/transformer_flux.py")
FLUX_CONFIG = ("https://huggingface.co/black-forest-labs/FLUX.1-dev/blob/main/"
               "transformer/config.json")


# ==== Diffusion U-Nets (diffusers UNet2DConditionModel) ========================================

def unet2d(name, source, size, channels, down, up, layers_per_block, transformer_layers,
           heads, cross_dim, linear_proj, add_embed):
    lat = size // 8
    net = Net(name, source, f"SAMPLE = one denoiser evaluation of one {size}x{size} image "
              f"({lat}x{lat}x4 latent, 77 text tokens of width {cross_dim}): one sampling step "
              "without classifier-free guidance (CFG doubles it). Text encoder and VAE excluded. "
              "Attention rows are scores and values matmuls; diffusers runs them in "
              "scaled_dot_product_attention on PyTorch 2.")
    temb = 4 * channels[0]
    # Timestep embedding: sinusoid -> Linear -> SiLU -> Linear (per sample, M = 1).
    net.mem("elementwise", "time sinusoidal embedding", 1, channels[0], False)
    net.linear("time embedding linear1", 1, channels[0], temb)
    net.act("time embedding silu", Map(temb, 1), False)
    net.linear("time embedding linear2", 1, temb, temb)
    if add_embed:
        net.mem("elementwise", "SDXL size/crop sinusoidal embeddings + concat", 6 + 1280, 2816,
                False, notes="6 time ids x 256 + pooled text 1280")
        net.linear("add embedding linear1", 1, 2816, temb)
        net.act("add embedding silu", Map(temb, 1), False)
        net.linear("add embedding linear2", 1, temb, temb)
        net.mem("elementwise", "time + add embedding", 2 * temb, temb, False)

    def resnet(x, cout):
        tag = f"resnet {x.c}->{cout} @{x.h}x{x.w}"
        one, two = ("1+2", "1+2") if x.c == cout else ("1", "2")
        net.norm(f"{tag} groupnorm{one}", x, notes="GroupNorm(32): a statistics pass, then apply")
        net.act(f"{tag} silu{one}", x)
        h = net.conv(f"{tag} conv1 3x3", x, cout, 3, bias=True)
        net.act("resnet time-embedding silu (every resnet)", Map(temb, 1), False)
        net.linear(f"{tag} time projection", 1, temb, cout)
        net.mem("elementwise", f"{tag} add time embedding", h.e + cout, h.e)
        net.norm(f"{tag} groupnorm{two}", h, notes="GroupNorm(32): a statistics pass, then apply")
        net.act(f"{tag} silu{two}", h)
        h = net.conv(f"{tag} conv2 3x3", h, cout, 3, bias=True)
        if x.c != cout:
            net.conv(f"{tag} shortcut conv 1x1", x, cout, 1, bias=True)
        net.add(f"{tag} residual add", h)
        return h

    def transformer(x, n_heads, depth):
        t, c = x.h * x.w, x.c
        tok = Map(c, t)
        tag = f"transformer {c} @{x.h}x{x.w}"
        net.norm(f"{tag} groupnorm", x)
        if linear_proj:
            net.mem("elementwise", f"{tag} to tokens permute copy", x.e, x.e)
            net.linear(f"{tag} proj_in linear", t, c, c, spatial=True)
        else:
            net.conv(f"{tag} proj_in conv 1x1", x, c, 1, bias=True)
            net.mem("elementwise", f"{tag} to tokens permute copy", x.e, x.e)
        hd = c // n_heads
        b = f"{tag} block" + (f"s x{depth}" if depth > 1 else "")
        for _ in range(depth):
            net.norm(f"{b} layernorm1-3", tok)
            for _ in ("q", "k", "v"):
                net.linear(f"{b} to_q/to_k/to_v self + to_q cross", t, c, c, bias=False,
                           spatial=True)
            net.attention(f"{b} self-attn", n_heads, t, t, hd)
            net.mem("elementwise", f"{b} attention output transpose copy", tok.e, tok.e)
            net.linear(f"{b} to_out self + cross", t, c, c, spatial=True)
            net.add(f"{b} residual add x3", tok)
            net.norm(f"{b} layernorm1-3", tok)
            net.linear(f"{b} to_q/to_k/to_v self + to_q cross", t, c, c, bias=False,
                       spatial=True)
            for _ in ("k", "v"):
                net.linear(f"{b} cross-attn to_k/to_v (text)", 77, cross_dim, c, bias=False)
            net.attention(f"{b} cross-attn", n_heads, t, 77, hd)
            net.mem("elementwise", f"{b} attention output transpose copy", tok.e, tok.e)
            net.linear(f"{b} to_out self + cross", t, c, c, spatial=True)
            net.add(f"{b} residual add x3", tok)
            net.norm(f"{b} layernorm1-3", tok)
            net.linear(f"{b} GEGLU proj", t, c, 8 * c, spatial=True)
            net.act(f"{b} GEGLU gelu(gate)", Map(4 * c, t))
            net.mem("elementwise", f"{b} GEGLU product", 8 * c * t, 4 * c * t)
            net.linear(f"{b} ff out", t, 4 * c, c, spatial=True)
            net.add(f"{b} residual add x3", tok)
        if linear_proj:
            net.linear(f"{tag} proj_out linear", t, c, c, spatial=True)
            net.mem("elementwise", f"{tag} to map permute copy", x.e, x.e)
        else:
            net.mem("elementwise", f"{tag} to map permute copy", x.e, x.e)
            net.conv(f"{tag} proj_out conv 1x1", x, c, 1, bias=True)
        net.add(f"{tag} residual add", x)

    x = net.conv("conv_in 3x3", Map(4, lat, lat), channels[0], 3, bias=True)
    skips = [x]
    for i, kind in enumerate(down):
        for _ in range(layers_per_block):
            x = resnet(x, channels[i])
            if kind.startswith("CrossAttn"):
                transformer(x, heads[i], transformer_layers[i])
            skips.append(x)
        if i < len(down) - 1:
            x = net.conv(f"downsample conv 3x3/2 {x.c} @{x.h}x{x.w}", x, x.c, 3, 2, 1, bias=True)
            skips.append(x)
    x = resnet(x, channels[-1])
    transformer(x, heads[-1], transformer_layers[-1])
    x = resnet(x, channels[-1])
    for i, kind in enumerate(up):
        cout = list(reversed(channels))[i]
        for _ in range(layers_per_block + 1):
            skip = skips.pop()
            cat = Map(x.c + skip.c, x.h, x.w)
            net.mem("elementwise", f"skip concat {x.c}+{skip.c} @{x.h}x{x.w}", cat.e, cat.e)
            x = resnet(cat, cout)
            if kind.startswith("CrossAttn"):
                transformer(x, list(reversed(heads))[i], list(reversed(transformer_layers))[i])
        if i < len(up) - 1:
            y = Map(x.c, 2 * x.h, 2 * x.w)
            net.mem("resize", f"upsample nearest 2x {x.c} @{x.h}x{x.w}", x.e, y.e)
            x = net.conv(f"upsample conv 3x3 {x.c} @{y.h}x{y.w}", y, cout, 3, bias=True)
    net.norm("out groupnorm", x)
    net.act("out silu", x)
    x = net.conv("conv_out 3x3", x, 4, 3, bias=True)
    net.loss("noise-prediction MSE", 2 * x.e, 1, True, "training only; sampling has no loss")
    return net


# ==== FLUX.1-dev transformer (diffusers FluxTransformer2DModel) ================================

def flux():
    img, txt, c, heads, hd, mlp = 4096, 512, 3072, 24, 128, 12288
    n = img + txt
    net = Net("FLUX.1-dev", FLUX_CODE, "SAMPLE = one transformer evaluation of one 1024x1024 "
              "image: 4096 image tokens (128x128x16 latent, 2x2 patches) + 512 T5 text tokens; "
              "one sampling step (guidance-distilled: no CFG). T5, CLIP and VAE excluded. "
              "Joint rows over 4608 tokens are marked spatial though the 512 text tokens do not "
              f"scale. Config: {FLUX_CONFIG}.")
    I, T, N = Map(c, img), Map(c, txt), Map(c, n)
    net.linear("x_embedder (image tokens)", img, 64, c, spatial=True)
    net.linear("context_embedder (T5 tokens)", txt, 4096, c)
    for e in ("timestep", "guidance"):
        net.mem("elementwise", f"{e} sinusoidal embedding", 1, 256, False)
        net.linear(f"{e} embedder linear1", 1, 256, c)
        net.act(f"{e} embedder silu", Map(c, 1), False)
        net.linear(f"{e} embedder linear2", 1, c, c)
    net.linear("pooled text embedder linear1", 1, 768, c)
    net.act("pooled text embedder silu", Map(c, 1), False)
    net.linear("pooled text embedder linear2", 1, c, c)
    net.mem("elementwise", "sum conditioning", 3 * c, c, False, 2)
    net.mem("elementwise", "RoPE cos/sin tables", 3 * n, 2 * n * hd, True)

    def modulate(tag, x, spatial):
        net.mem("elementwise", f"{tag} modulate (scale + shift)", x.e, x.e, spatial, 2,
                "x * (1 + scale) + shift: two kernels")

    def rms(tag, x, spatial):
        net.row(f"{tag}", "norm", spatial, read=x.e, written=x.e, repeats=5,
                notes="diffusers RMSNorm runs unfused: cast, square-mean, rsqrt scale, cast, "
                "weight (5 passes)")
        net.params += hd

    def joint_attention(tag, streams):
        """q, k, v per stream, RMSNorm on q and k, RoPE, one attention over all tokens."""
        for s, (label, x, spatial) in streams.items():
            for _ in ("q", "k", "v"):
                net.linear(f"{tag} {label} to_q/to_k/to_v", x.h, c, c, spatial=spatial)
            for _ in ("q", "k"):
                rms(f"{tag} {label} RMSNorm q+k", x, spatial)
        if len(streams) > 1:
            net.mem("elementwise", f"{tag} concat text+image q+k+v", 3 * N.e, 3 * N.e,
                    repeats=1)
        net.mem("elementwise", f"{tag} RoPE on q and k", N.e + 2 * n * hd, N.e, repeats=2)
        net.attention(f"{tag} joint", heads, n, n, hd)
        net.mem("elementwise", f"{tag} output transpose copy", N.e, N.e)

    def stream_tail(tag, x, spatial):
        net.linear(f"{tag} attn out", x.h, c, c, spatial=spatial)
        net.mem("elementwise", f"{tag} gate x attn + residual", 2 * x.e + c, x.e, spatial, 2)
        net.norm(f"{tag} norm2 LayerNorm", x, affine=False, spatial=spatial)
        modulate(f"{tag} norm2", x, spatial)
        net.linear(f"{tag} ff proj (GELU tanh)", x.h, c, mlp, spatial=spatial)
        net.act(f"{tag} ff gelu", Map(mlp, x.h), spatial)
        net.linear(f"{tag} ff out", x.h, mlp, c, spatial=spatial)
        net.mem("elementwise", f"{tag} gate x ff + residual", 2 * x.e + c, x.e, spatial, 2)

    for _ in range(19):
        tag = "double blocks1-19"
        for label, x, spatial in (("image", I, True), ("text", T, False)):
            net.act(f"{tag} adaLN silu(temb) (image + text)", Map(c, 1), False)
            net.linear(f"{tag} adaLN modulation linears (image + text)", 1, c, 6 * c,
                       notes="per sample (M = batch): weight-bandwidth bound")
            net.norm(f"{tag} {label} norm1 LayerNorm", x, affine=False, spatial=spatial)
            modulate(f"{tag} {label} norm1", x, spatial)
        joint_attention(tag, {"i": ("image", I, True), "t": ("text", T, False)})
        stream_tail(f"{tag} image", I, True)
        stream_tail(f"{tag} text", T, False)
    net.mem("elementwise", "concat text + image streams", N.e, N.e)
    for _ in range(38):
        tag = "single blocks1-38"
        net.act(f"{tag} adaLN silu(temb)", Map(c, 1), False)
        net.linear(f"{tag} adaLN modulation linear", 1, c, 3 * c,
                   notes="per sample (M = batch): weight-bandwidth bound")
        net.norm(f"{tag} norm LayerNorm", N, affine=False)
        modulate(f"{tag} norm", N, True)
        net.linear(f"{tag} proj_mlp", n, c, mlp, spatial=True)
        net.act(f"{tag} mlp gelu (tanh)", Map(mlp, n))
        joint_attention(tag, {"j": ("joint", N, True)})
        net.mem("elementwise", f"{tag} concat attn + mlp", n * (c + mlp), n * (c + mlp))
        net.linear(f"{tag} proj_out", n, c + mlp, c, spatial=True)
        net.mem("elementwise", f"{tag} gate x out + residual", 2 * N.e + c, N.e, True, 2)
    net.act("norm_out silu(temb)", Map(c, 1), False)
    net.linear("norm_out modulation linear", 1, c, 2 * c)
    net.norm("norm_out LayerNorm (image tokens)", I, affine=False)
    modulate("norm_out", I, True)
    net.linear("proj_out", img, c, 64, spatial=True)
    net.loss("flow-matching MSE", 2 * img * 64, 1, True, "training only; sampling has no loss")
    # RMSNorm weights were counted per call; AdaLayerNorm/LayerNorm here have no affine params.
    return net


SD15 = dict(size=512, channels=(320, 640, 1280, 1280),
            down=("CrossAttnDownBlock2D",) * 3 + ("DownBlock2D",),
            up=("UpBlock2D",) + ("CrossAttnUpBlock2D",) * 3, layers_per_block=2,
            transformer_layers=(1, 1, 1, 1), heads=(8, 8, 8, 8), cross_dim=768,
            linear_proj=False, add_embed=False)
SDXL = dict(size=1024, channels=(320, 640, 1280),
            down=("DownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D"),
            up=("CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "UpBlock2D"), layers_per_block=2,
            transformer_layers=(1, 2, 10), heads=(5, 10, 20), cross_dim=2048, linear_proj=True,
            add_embed=True)
