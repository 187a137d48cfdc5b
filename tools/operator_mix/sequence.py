"""Operator mixes of the sequence and recommender models of NVIDIA DeepLearningExamples: GNMT v2,
Tacotron 2, WaveGlow and NCF. One sample is the batch element of the reference trainer (a
sentence pair, an utterance, an audio segment, a user-item pair); Net.units converts to the unit
models.csv counts FLOPs per."""

from .net import TRAINING_ONLY, Map, Net

DLE_GNMT = "NVIDIA/DeepLearningExamples@072523d5b214:PyTorch/Translation/GNMT/seq2seq/models"
DLE_TACO = ("NVIDIA/DeepLearningExamples@0053b4b88862:"
            "PyTorch/SpeechSynthesis/Tacotron2/tacotron2/model.py")
DLE_WAVEGLOW = ("NVIDIA/DeepLearningExamples@3ed70df5e3f6:"
                "PyTorch/SpeechSynthesis/Tacotron2/waveglow/model.py")
DLE_NCF = "NVIDIA/DeepLearningExamples@205058fd7c19:PyTorch/Recommendation/NCF/neumf.py"


# ==== GNMT v2 (NVIDIA DeepLearningExamples) ====================================================

def lstm(net, tag, t, cin, hidden, directions=1):
    """cuDNN LSTM over t steps: one input-projection GEMM for all steps, then per step a
    recurrent GEMM (both directions at once when bidirectional) and the fused gate math."""
    g = 4 * hidden
    net.linear(f"{tag} input projection (all steps)", t, cin, directions * g, bias=False)
    net.row(f"{tag} recurrent GEMM", "gemm_sequential", False, m=1, n=g, k=hidden,
            groups=directions, read=directions * hidden, written=directions * g, repeats=t,
            notes=f"{t} sequential steps" + (", both directions per step" if directions > 1
                                             else ""))
    net.params += directions * (g * hidden + 2 * g)  # recurrent weights, two bias vectors
    net.mem("lstm_cell", f"{tag} gate math", directions * 9 * hidden, directions * 2 * hidden,
            False, t, "per step: input and recurrent gates + c_prev in, h and c out (cuDNN "
            "also keeps the gates for backward while training)")


def gnmt():
    src, tgt, h, vocab = 25, 25, 1024, 32320
    net = Net("GNMT v2", DLE_GNMT, "SAMPLE = one WMT16 en-de sentence pair of 50 BPE tokens as "
              "NVIDIA's tok/s counts them: 25 source tokens + 25 decoder steps (tgt length - 1); "
              "en and de BPE lengths are near equal (Vaswani et al. 2017 batch ~25k source + "
              "25k target tokens). models.csv gflops_per_sample is per token = this total / 50.",
              units=src + tgt, unit="token")
    net.mem("embedding", "encoder embedding lookup", src * h, src * h, False,
            notes="shared source/target embedding table, 32320 x 1024")
    net.params += vocab * h
    net.dropout("encoder dropout (layer 0 input)", Map(h, src), False)
    net.mem("elementwise", "encoder pack_padded_sequence copy", src * h, src * h, False)
    lstm(net, "encoder L0 bidirectional LSTM", src, h, h, directions=2)
    net.mem("elementwise", "encoder pad_packed_sequence copy", src * 2 * h, src * 2 * h, False)
    net.dropout("encoder dropout (layer 1 input)", Map(2 * h, src), False)
    lstm(net, "encoder L1 LSTM", src, 2 * h, h)
    for _ in range(2):
        net.dropout("encoder L2-L3 dropout", Map(h, src), False)
        lstm(net, "encoder L2-L3 LSTM", src, h, h)
        net.add("encoder L2-L3 residual add", Map(h, src), False)
    net.mem("embedding", "decoder embedding lookup", tgt * h, tgt * h, False)
    lstm(net, "decoder L0 LSTM (attention query)", tgt, h, h)
    # Normalized Bahdanau attention over the whole target sequence at once (teacher forcing).
    net.linear("attention query projection", tgt, h, h, bias=False)
    net.linear("attention key projection", src, h, h, bias=False)
    net.params += h + 1 + h  # linear_att, normalize_scalar, normalize_bias
    e = tgt * src * h
    net.mem("elementwise", "attention query+key broadcast add", (tgt + src) * h, e, False,
            notes="b x t_q x t_k x 1024 tensor")
    net.mem("elementwise", "attention normalize bias add", e, e, False)
    net.mem("activation", "attention tanh", e, e, False)
    net.row("attention score (tanh . v)", "gemm", False, m=tgt * src, n=1, k=h, read=e,
            written=tgt * src, notes="matmul with the normalised vector v: a GEMV")
    net.mem("elementwise", "attention mask fill", tgt * src, tgt * src, False)
    net.mem("softmax", "attention softmax", tgt * src, tgt * src, False)
    net.row("attention context (weights x encoder outputs)", "attention", False, m=tgt, n=h,
            k=src, read=tgt * src + src * h, written=tgt * h, notes="torch.bmm per sentence")
    for i in range(1, 4):  # every later layer takes [previous output, attention context]
        net.dropout("decoder L1-L3 dropout", Map(h, tgt), False)
        net.mem("elementwise", "decoder L1-L3 concat attention context", 2 * tgt * h,
                2 * tgt * h, False)
        lstm(net, "decoder L1-L3 LSTM", tgt, 2 * h, h)
        if i > 1:
            net.add("decoder L2-L3 residual add", Map(h, tgt), False)
    net.linear("classifier", tgt, h, vocab)
    net.loss("label-smoothed cross-entropy", tgt * vocab, tgt * vocab,
             notes="log-softmax over 32320 tokens per decoder step (smoothing 0.1)",
             classes=vocab)
    return net


# ==== Tacotron 2 (NVIDIA DeepLearningExamples) =================================================

def tacotron2():
    chars, frames, mel = 100, 566, 80
    # DLE's TextMelCollate pads every batch to its longest clip, and the decoder, the postnet
    # and the loss run over the padded length. The batches of the benchmarks (48-256 clips)
    # all but surely hold a clip near LJSpeech's longest, 10.10 s (LJSpeech README: min 1.11 s,
    # max 10.10 s, mean 6.57 s) = 10.10 x 22050 / 256 = 870 frames. The unit stays the mean
    # clip's 566 real frames, which is what DLE's throughput counts.
    padded = 870
    net = Net("Tacotron 2", DLE_TACO, "SAMPLE = one LJSpeech utterance: 566 mel frames (mean "
              "clip 6.57 s x 22050 Hz / hop 256) and 100 characters (LJSpeech README: 1,308,674 "
              "characters / 13,100 clips). models.csv gflops_per_sample is per mel frame = this "
              "total / 566. The decoder runs one step per frame; DLE pads each batch to its "
              "longest clip (LJSpeech's longest is 10.10 s = 870 frames): the decoder loop, postnet and "
              "loss run over 870 frames per utterance, the unit stays 566 real frames.",
              units=frames, unit="mel frame")
    net.mem("embedding", "symbol embedding lookup", chars * 512, chars * 512, False,
            notes="148 symbols x 512")
    net.params += 148 * 512
    x = Map(512, chars)
    for _ in range(3):
        net.conv("encoder conv 5 x1d 512 (x3)", x, 512, 5, bias=True, dims=1)
        net.norm("encoder conv bn (x3)", x, spatial=False)
        net.act("encoder conv relu (x3)", x, False)
        net.dropout("encoder conv dropout (x3)", x, False)
    net.mem("elementwise", "encoder pack_padded_sequence copy", x.e, x.e, False)
    lstm(net, "encoder bidirectional LSTM", chars, 512, 256, directions=2)
    net.mem("elementwise", "encoder pad_packed_sequence copy", x.e, x.e, False)
    steps = padded + 1  # go frame + teacher-forced frames; the loop runs `padded` steps
    for i in (1, 2):
        net.linear(f"prenet linear{i}", steps, 80 if i == 1 else 256, 256, bias=False)
        net.act(f"prenet relu{i}", Map(256, steps), False)
        net.mem("elementwise", f"prenet dropout{i}", 256 * steps, 256 * steps, False,
                notes="dropout 0.5 stays on at inference too (Prenet passes training=True)")
    net.linear("attention memory projection", chars, 512, 128, bias=False)
    # Decoder loop: one step per output frame, every GEMM has M = batch.
    seq = dict(kind="gemm_step", repeats=padded)
    # Decoder.forward takes each step's input as decoder_inputs[len(mel_outputs)]: a select of
    # the prenet output (steps x 256 per utterance), whose backward materialises that whole
    # tensor's gradient at every step.
    net.row("step: select the step's prenet frame", "view", False, read=steps * 256,
            written=256, repeats=padded)
    # The calls of one decoder step that launch no kernel, counted in Decoder.decode and
    # Attention (PyTorch 1.13's nn.LSTMCell and F.linear): each LSTMCell's two weight t() (4);
    # the two attention-weight unsqueezes before their cat (2); the query's unsqueeze (1); the
    # query, location and v projections of 3-D inputs, each a weight t(), a reshape to 2-D and
    # a view back (9); the location features' transpose (1); the energies' squeeze (1);
    # alignment.data before masked_fill_ (1); the weights' unsqueeze before bmm and the
    # context's squeeze after (2); the mel and gate projections' weight t() (2); the loop's
    # squeezes of the mel and gate outputs (2). Each has an autograd node that backward runs.
    net.row("step: views reshapes and weight transposes (25 per step)", "view", False,
            repeats=25 * padded)
    net.mem("elementwise", "step: concat prenet out + context", 768, 768, False, padded)
    net.linear("step: attention LSTMCell input GEMM", 1, 768, 4096, bias=True, **seq)
    net.linear("step: attention LSTMCell hidden GEMM", 1, 1024, 4096, bias=True, **seq)
    net.mem("lstm_cell", "step: attention LSTMCell gate math", 9 * 1024, 2 * 1024, False, padded)
    net.dropout("step: attention hidden dropout", Map(1024, 1), False, padded)
    net.mem("elementwise", "step: concat attention weights + cumulative", 2 * chars, 2 * chars,
            False, padded)
    net.linear("step: attention query projection", 1, 1024, 128, bias=False, **seq)
    net.row("step: location conv 1d k31 2->32", "gemm_step", False, m=chars, n=32, k=62,
            read=2 * chars, written=32 * chars, repeats=padded)
    net.params += 2 * 32 * 31
    net.linear("step: location dense 32->128", chars, 32, 128, bias=False, **seq)
    net.mem("elementwise", "step: energies add (query + location + memory)",
            2 * chars * 128 + 128, chars * 128, False, 2 * padded,
            notes="two broadcast adds per step")
    net.mem("activation", "step: energies tanh", chars * 128, chars * 128, False, padded)
    net.linear("step: energies v 128->1", chars, 128, 1, bias=False, **seq)
    net.mem("elementwise", "step: attention mask fill", chars, chars, False, padded)
    net.mem("softmax", "step: attention softmax", chars, chars, False, padded)
    net.row("step: attention context bmm", "attention", False, m=1, n=512, k=chars,
            read=chars + chars * 512, written=512, repeats=padded,
            notes="per-sentence batched matmul inside the recurrence")
    net.mem("elementwise", "step: cumulative attention add", 2 * chars, chars, False, padded)
    net.mem("elementwise", "step: concat attention hidden + context", 1536, 1536, False, padded)
    net.linear("step: decoder LSTMCell input GEMM", 1, 1536, 4096, bias=True, **seq)
    net.linear("step: decoder LSTMCell hidden GEMM", 1, 1024, 4096, bias=True, **seq)
    net.mem("lstm_cell", "step: decoder LSTMCell gate math", 9 * 1024, 2 * 1024, False, padded)
    net.dropout("step: decoder hidden dropout", Map(1024, 1), False, padded)
    net.mem("elementwise", "step: concat decoder hidden + context", 1536, 1536, False, padded)
    net.linear("step: mel projection", 1, 1536, mel, bias=True, **seq)
    net.linear("step: gate projection", 1, 1536, 1, bias=True, **seq)
    net.mem("elementwise", "stack step outputs (mel + gate + alignments)",
            padded * (mel + 1 + chars), padded * (mel + 1 + chars), False)
    x = Map(mel, padded)
    for i, cout in enumerate((512, 512, 512, 512, mel), 1):
        tag = {1: "postnet conv1", 5: "postnet conv5"}.get(i, "postnet conv2-4")
        y = net.conv(f"{tag} 5 x1d {x.c}->{cout}", x, cout, 5, bias=True, dims=1)
        tag = "postnet conv1-4" if i < 5 else "postnet conv5"
        net.norm(f"{tag} bn", y, spatial=False)
        if i < 5:
            net.act(f"{tag} tanh", y, False)
        net.dropout(f"{tag} dropout", y, False)
        x = y
    net.add("postnet residual add", x, False, notes="mel + postnet correction")
    net.loss("MSE (decoder + postnet) + gate BCE", 4 * padded * mel + 2 * padded, 3,
             notes="two mel MSEs against the target, stop-token BCE")
    return net


# ==== WaveGlow (NVIDIA DeepLearningExamples) ===================================================

def waveglow():
    segment, group, flows, wn_layers, ch, mel = 8000, 8, 12, 8, 512, 80
    t = segment // group
    frames = segment // 256 + 1
    net = Net("WaveGlow", DLE_WAVEGLOW, "SAMPLE = one 8,000-audio-sample training segment "
              "(32 mel frames, 1,000 groups of 8 samples). DLE training defaults: 12 flows, "
              "8 WN layers, 512 WN channels. models.csv gflops_per_sample is per audio sample "
              "= this total / 8000. Not in these per-sample rows: weight normalisation "
              "recomputes every WN weight (~261M elements) once per step, whatever the batch.",
              units=segment, unit="audio sample")
    up_len = (frames - 1) * 256 + 1024
    # What backward keeps (`freed` rows are read only by copies, slices and adds, which save
    # nothing): the upsampled spectrogram is read only by the unfold copy; in each WN layer the
    # in_layer's and cond_layer's outputs only by the fused add, the res_skip output only by the
    # residual and skip adds, and every skip sum but the last only by the next one.
    net.row("upsample ConvTranspose1d 80->80 k1024/256", "conv", False, m=frames, n=80 * 1024,
            k=80, read=80 * frames, written=80 * up_len,
            notes="as a GEMM over input frames, then col2im overlap-add; trimmed to 8000",
            freed=True)
    net.params += 80 * 80 * 1024 + 80
    net.mem("elementwise", "spectrogram unfold + permute copy", 80 * segment, 80 * segment, False)
    remaining, half = group, group // 2
    for k in range(flows):
        if k % 4 == 0 and k > 0:
            remaining -= 2
            half -= 1
        tag = f"flows{k // 4 * 4 + 1}-{k // 4 * 4 + 4} ({remaining} ch)"
        net.linear(f"{tag} invertible 1x1 conv", t, remaining, remaining, bias=False)
        net.linear(f"{tag} WN start 1x1", t, half, ch, bias=True)
        net.params += ch  # weight norm g
        x = Map(ch, t)
        for i in range(wn_layers):
            lt = f"{tag} WN layers"
            net.row(f"{lt} in_layer k3 (dilation 1-128)", "conv", False, m=t, n=2 * ch,
                    k=3 * ch, read=x.e, written=2 * x.e, notes="dilated conv as implicit GEMM",
                    freed=True)
            net.params += 3 * ch * 2 * ch + 2 * ch + 2 * ch
            net.linear(f"{lt} cond_layer 1x1 (mel 640)", t, mel * group, 2 * ch, bias=True,
                       freed=True)
            net.params += 2 * ch
            net.mem("elementwise", f"{lt} add + tanh*sigmoid (jit fused)", 4 * x.e, 3 * x.e, False,
                    notes="fused_add_tanh_sigmoid_multiply is TorchScript-fused; it also writes "
                    "the tanh and sigmoid results, which backward reads (their derivatives and "
                    "the product's need them)")
            res = 2 * ch if i < wn_layers - 1 else ch
            tag2 = f"{lt} res_skip 1x1" if i < wn_layers - 1 else f"{tag} WN last skip 1x1"
            net.linear(tag2, t, ch, res, bias=True, freed=True)
            net.params += res
            if i < wn_layers - 1:
                net.add(f"{lt} residual add", x, False)
            if 0 < i < wn_layers - 1:
                net.mem("elementwise", f"{lt} skip sum", 2 * x.e, x.e, False,
                        notes="skip accumulation", freed=True)
            elif i == wn_layers - 1:
                net.add(f"{tag} WN last skip sum", x, False, notes="read by WN end")
        net.linear(f"{tag} WN end 1x1", t, ch, 2 * half, bias=True)
        net.mem("elementwise", f"{tag} affine coupling exp(log s)*x + b", 3 * half * t,
                half * t, False, repeats=2, notes="exp, then multiply-add")
        net.mem("elementwise", f"{tag} concat halves", remaining * t, remaining * t, False)
    net.loss("flow negative log-likelihood", segment + 8 * t, 1,
             notes="sum z^2 / 2 sigma^2 - sum log s - log det W")
    return net


# ==== NCF NeuMF (NVIDIA DeepLearningExamples) ==================================================

def ncf():
    users, items, mf, layers = 138493, 26744, 64, (256, 256, 128, 64)
    net = Net("NCF (NeuMF)", DLE_NCF, "SAMPLE = one (user, item) pair (positives and sampled "
              "negatives alike), MovieLens-20M, DLE defaults: 64 GMF factors, MLP 256-256-128-64, "
              "dropout 0.5. Embedding gradients are dense (nn.Embedding, sparse=False).")
    net.mem("embedding", "GMF user+item embedding lookups", mf, mf, False, 2,
            f"tables {users} and {items} x {mf}, one gather each")
    # What backward keeps (NeuMF.forward): the GMF lookups (the product saves both), the MLP's
    # concatenation and each ReLU's result (ReLU saves its result, so the Linear outputs it reads
    # are `freed`), the dropout outputs the next Linear reads, and the final concatenation. The
    # MLP lookups, the GMF product and the last dropout output are read only by torch.cat.
    net.mem("embedding", "MLP user+item embedding lookups", layers[0] // 2, layers[0] // 2,
            False, 2, f"tables x {layers[0] // 2}, one gather each", freed=True)
    net.params += (users + items) * (mf + layers[0] // 2)
    net.mem("elementwise", "GMF product", 2 * mf, mf, False, freed=True)
    net.mem("elementwise", "MLP concat", layers[0], layers[0], False)
    for i in range(1, len(layers)):
        net.linear(f"MLP linear{i} {layers[i - 1]}->{layers[i]}", 1, layers[i - 1], layers[i],
                   freed=True)
        net.act(f"MLP relu{i}", Map(layers[i], 1), False)
        net.dropout(f"MLP dropout{i}", Map(layers[i], 1), False, freed=i == len(layers) - 1)
    net.mem("elementwise", "concat GMF + MLP", mf + layers[-1], mf + layers[-1], False)
    net.linear("final linear", 1, mf + layers[-1], 1)
    net.loss("BCE with logits", 2, 1, notes="TorchScript-traced criterion")
    return net
