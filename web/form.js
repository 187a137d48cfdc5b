// cloudfit's form: which workload fields each kind of job shows, built from the parser's own
// field table (GET /v1/workload-fields), so every field the parser accepts has an input and a
// kind the parser does not know is never offered. The form's state lives in the URL.
'use strict';

const cf = (window.cloudfit = window.cloudfit || {});
const $ = (id) => document.getElementById(id);

// Catalog names and messages reach innerHTML; an imported catalog must not be able to inject markup.
cf.esc = (text) => String(text).replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

// Every kind the page offers, in the order a user looks for them. Aliases the parser also
// accepts (finetune, serving, tabular) select the same kind.
cf.KINDS = [
  ['train', 'Training or full fine-tuning', 'Trains every weight: from scratch or a full fine-tune.'],
  ['lora', 'LoRA fine-tuning', 'Frozen base model, trainable low-rank adapters.'],
  ['qlora', 'QLoRA fine-tuning', '4-bit base model with 16-bit adapters.'],
  ['inference', 'Batch inference', 'Offline inference over a dataset: tokens, images or samples.'],
  ['serve', 'Online serving (inference API)', 'A model behind an API at a request rate, with latency targets.'],
  ['render', 'Offline rendering', 'Frames of a scene (Blender Cycles and the like).'],
  ['realtime', 'Real-time rendering, cloud gaming', 'Interactive streams at a resolution and frame rate.'],
  ['cad', 'CAD / CAE visualisation', 'Remote workstation seats for CAD and simulation.'],
  ['preprocess', 'Data preprocessing', 'CPU-bound preparation of a dataset.'],
  ['classic-ml', 'Classic ML (tabular)', 'Gradient-boosted trees or linear models on rows and features.'],
];
cf.ALIASES = { finetune: 'train', serving: 'serve', tabular: 'classic-ml' };

const TRAIN = ['train', 'lora', 'qlora'];
const MODEL = [...TRAIN, 'inference', 'serve'];
const STREAMS = ['realtime', 'cad'];
const ALL = cf.KINDS.map(([k]) => k);

// The fields each kind shows on the form, with the label a person reads; the parser's help and
// accepted values become the tooltip. Fields of the parser not listed here go under "More".
cf.LAYOUT = [
  ['model', 'Model', MODEL, 'search: llama, resnet, sdxl'],
  ['precision', 'Precision', MODEL],
  ['tokens', 'Tokens', [...TRAIN, 'inference'], 'e.g. 5e7'],
  ['samples', 'Samples', [...TRAIN, 'inference']],
  ['epochs', 'Epochs', TRAIN],
  ['dataset_samples', 'Dataset samples', TRAIN],
  ['steps', 'Optimizer steps', TRAIN],
  ['batch', 'Global batch', [...TRAIN, 'inference']],
  ['micro_batch', 'Micro batch', TRAIN],
  ['seq_len', 'Sequence length', MODEL],
  ['resolution', 'Image side, px', [...TRAIN, 'inference']],
  ['optimizer', 'Optimizer', TRAIN],
  ['recompute', 'Recomputation', TRAIN],
  ['zero', 'ZeRO stage', TRAIN, 'auto'],
  ['fsdp', 'FSDP', TRAIN],
  ['master_weights', 'fp32 master weights', TRAIN],
  ['tp', 'Tensor parallel', MODEL, 'auto'],
  ['pp', 'Pipeline parallel', TRAIN, 'auto'],
  ['flash_attention', 'FlashAttention', MODEL],
  ['lora_rank', 'LoRA rank', ['lora', 'qlora']],
  ['lora_targets', 'LoRA targets', ['lora', 'qlora']],
  ['checkpoints_kept', 'Checkpoints kept', TRAIN],
  ['request_rate', 'Requests/s', ['serve']],
  ['prompt_tokens', 'Prompt tokens', ['inference', 'serve']],
  ['output_tokens', 'Output tokens', ['inference', 'serve']],
  ['ttft_target_ms', 'First token within, ms', ['serve']],
  ['tpot_target_ms', 'Per token within, ms', ['serve']],
  ['latency_percentile', 'At percentile', ['serve']],
  ['engine', 'Engine', ['serve']],
  ['kv_cache_dtype', 'KV cache format', ['inference', 'serve']],
  ['max_batch', 'Concurrent sequences', ['serve']],
  ['gpu_memory_utilization', 'Engine memory share', ['serve']],
  ['target_utilisation', 'Target utilisation', ['serve']],
  ['multi_gpu', 'Multi-GPU split', ['inference', 'serve']],
  ['weight_bits', 'Bits per weight', ['inference', 'serve']],
  ['diffusion_steps', 'Diffusion steps', ['inference']],
  ['frames', 'Frames', ['render']],
  ['seconds_per_frame', 'Seconds per frame', ['render']],
  ['reference_gpu', 'Measured on GPU', ['render'], 'e.g. RTX-4090'],
  ['benchmark_score', 'Blender benchmark score', ['render']],
  ['scene_memory_gib', 'Scene memory, GiB', ['render', ...STREAMS]],
  ['session_profile', 'Session profile', STREAMS],
  ['streams', 'Streams or seats', STREAMS],
  ['width', 'Width, px', STREAMS],
  ['height', 'Height, px', STREAMS],
  ['fps', 'Frames/s', STREAMS],
  ['codec', 'Codec', STREAMS],
  ['stream_mbps', 'Bitrate, Mbit/s', STREAMS],
  ['vcpus_per_session', 'vCPUs per seat', STREAMS],
  ['ram_gib_per_session', 'RAM per seat, GiB', STREAMS],
  ['gpu_memory_gib_per_session', 'GPU memory per seat, GiB', STREAMS],
  ['data_gb', 'Data, GB', ['preprocess']],
  ['per_core_mb_s', 'MB/s per vCPU', ['preprocess']],
  ['rows', 'Rows', ['classic-ml']],
  ['features', 'Features', ['classic-ml']],
  ['algorithm', 'Algorithm', ['classic-ml']],
  ['ml_task', 'Train or predict', ['classic-ml']],
  ['trees', 'Trees', ['classic-ml']],
  ['tree_depth', 'Tree depth', ['classic-ml']],
  ['data_type', 'Data type', [...TRAIN, 'inference', 'preprocess']],
  ['os', 'Operating system', ALL],
];
// Fields of the parser the page leaves out, and why (the browser test checks the list).
cf.NOT_ON_FORM = { kind: 'the Task selector', model_config: 'a path to a config.json: the API reads no files' };

cf.fields = new Map();  // name -> {name, help, accepted, kinds, input}
cf.kinds = [];          // the kinds of cf.KINDS the parser accepts

function choices(accepted) {
  if (accepted === 'true or false') return ['true', 'false'];
  const m = /^one of (.*)$/.exec(accepted);
  return m ? m[1].split(', ') : null;
}

function makeInput(field, placeholder) {
  const values = choices(field.accepted);
  let input;
  if (values) {
    input = document.createElement('select');
    const blank = document.createElement('option');
    blank.value = '';
    blank.textContent = field.name === 'precision' ? 'bf16 (default)' : 'default';
    input.appendChild(blank);
    for (const v of values) {
      if (cf.ALIASES[v] && field.name === 'kind') continue;
      const o = document.createElement('option');
      o.value = o.textContent = v;
      input.appendChild(o);
    }
  } else {
    input = document.createElement('input');
    if (/number/.test(field.accepted)) input.inputMode = 'decimal';
    input.placeholder = placeholder || '';
    if (field.name === 'model') input.setAttribute('list', 'models');
  }
  input.id = input.name = field.name;
  input.dataset.workload = '1';
  input.title = `${field.help}. Accepts ${field.accepted}.`;
  return input;
}

// Builds the form from the parser's table; `table` is /v1/workload-fields' fields.
cf.buildForm = function (table) {
  const known = new Map(table.map((f) => [f.name, f]));
  const kindValues = choices(known.get('kind').accepted) || [];
  cf.kinds = cf.KINDS.filter(([k]) => kindValues.includes(k));
  const select = $('kind');
  for (const [k, label] of cf.kinds) {
    const o = document.createElement('option');
    o.value = k;
    o.textContent = label;
    select.appendChild(o);
  }
  const placed = new Set();
  const add = (f, box, label, kinds, placeholder) => {
    const wrap = document.createElement('label');
    wrap.dataset.kinds = kinds.join(' ');
    wrap.append(label + ' ');
    const input = makeInput(f, placeholder);
    wrap.appendChild(input);
    box.appendChild(wrap);
    cf.fields.set(f.name, { ...f, kinds, input, wrap });
    placed.add(f.name);
  };
  for (const [name, label, kinds, placeholder] of cf.LAYOUT) {
    if (known.has(name)) add(known.get(name), $('job-fields'), label, kinds, placeholder);
  }
  for (const f of table) {
    if (placed.has(f.name) || cf.NOT_ON_FORM[f.name]) continue;
    add(f, $('more-fields'), f.name.replace(/_/g, ' '), ALL);
  }
  select.addEventListener('change', cf.showKind);
  cf.showKind();
};

// Shows the fields of the chosen kind; the others are disabled, so they are neither sent nor
// reached with Tab, and keep their values for when the kind comes back.
cf.showKind = function () {
  const kind = $('kind').value;
  for (const f of cf.fields.values()) {
    const on = f.kinds.includes(kind);
    f.wrap.hidden = !on;
    f.input.disabled = !on;
  }
  const k = cf.kinds.find(([name]) => name === kind);
  $('kind-help').textContent = k ? k[2] : '';
};

cf.checked = (name) => [...document.querySelectorAll(`input[name=${name}]:checked`)].map((c) => c.value);

// The request the form describes, as POST /v1/recommend takes it.
cf.request = function () {
  const workload = { kind: $('kind').value };
  for (const f of cf.fields.values()) {
    const v = f.input.value.trim();
    if (!f.input.disabled && v !== '') workload[f.name] = v;
  }
  const options = { top: 20, providers: cf.checked('provider'), pricing: cf.checked('pricing'),
                    objective: document.querySelector('input[name=objective]:checked').value };
  if (!$('include_cpu').checked) options.include_cpu = false;
  for (const input of document.querySelectorAll('[data-option]')) {
    const v = input.value.trim();
    if (v === '') continue;
    options[input.dataset.option] = input.dataset.list ? v.split(',').map((s) => s.trim()).filter(Boolean) : v;
  }
  const request = { workload, options };
  if ($('measured').value.trim()) request.calibration = { measured: [$('measured').value.trim()] };
  return request;
};

// The same request as a `cloudfit recommend` command line.
cf.command = function (request) {
  const quote = (v) => (/^[\w.,:@%+=\/-]+$/.test(v) ? v : `'${String(v).replace(/'/g, `'\\''`)}'`);
  const flag = (name) => '--' + name.replace(/_/g, '-');
  const parts = ['cloudfit', 'recommend'];
  for (const [k, v] of Object.entries(request.workload)) parts.push(flag(k), quote(v));
  const o = request.options;
  const all = [...document.querySelectorAll('input[name=provider]')].map((c) => c.value);
  if (o.providers.length !== all.length) parts.push('--provider', quote(o.providers.join(',')));
  if (o.pricing.join(',') !== 'ondemand,spot') parts.push('--pricing', quote(o.pricing.join(',')));
  if (o.include_cpu === false) parts.push('--no-cpu');
  if (o.objective !== 'cheapest') parts.push('--objective', o.objective);
  for (const input of document.querySelectorAll('[data-option]')) {
    const v = o[input.dataset.option];
    if (v !== undefined) parts.push(input.dataset.flag, quote(Array.isArray(v) ? v.join(',') : v));
  }
  if (request.calibration) parts.push('--measured', quote(request.calibration.measured[0]));
  parts.push('--top', String(o.top));
  return parts.join(' ');
};

// The URL holds the form, so a result can be shared and reproduced.
cf.toUrl = function () {
  const q = new URLSearchParams();
  q.set('kind', $('kind').value);
  for (const f of cf.fields.values()) if (!f.input.disabled && f.input.value) q.set(f.name, f.input.value);
  for (const input of document.querySelectorAll('[data-option], #measured')) if (input.value) q.set(input.id, input.value);
  q.set('providers', cf.checked('provider').join(','));
  q.set('pricing', cf.checked('pricing').join(','));
  q.set('objective', document.querySelector('input[name=objective]:checked').value);
  if (!$('include_cpu').checked) q.set('include_cpu', '0');
  history.replaceState(null, '', '?' + q.toString());
};

cf.fromUrl = function () {
  const q = new URLSearchParams(location.search);
  if (q.has('kind')) $('kind').value = cf.ALIASES[q.get('kind')] || q.get('kind');
  cf.showKind();
  for (const [name, f] of cf.fields) if (q.has(name)) f.input.value = q.get(name);
  for (const input of document.querySelectorAll('[data-option], #measured')) if (q.has(input.id)) input.value = q.get(input.id);
  for (const group of ['provider', 'pricing']) {
    const key = group === 'provider' ? 'providers' : 'pricing';
    if (!q.has(key)) continue;
    const wanted = q.get(key).split(',');
    for (const c of document.querySelectorAll(`input[name=${group}]`)) c.checked = wanted.includes(c.value);
  }
  if (q.has('objective')) {
    const r = document.querySelector(`input[name=objective][value="${CSS.escape(q.get('objective'))}"]`);
    if (r) r.checked = true;
  }
  $('include_cpu').checked = q.get('include_cpu') !== '0';
  return q.has('kind');
};

// Applies a hint of what would make the job fit: its workload fields and options.
cf.applyHint = function (hint) {
  for (const [k, v] of Object.entries(hint.workload || {})) {
    if (k === 'kind') { $('kind').value = cf.ALIASES[v] || v; cf.showKind(); continue; }
    const f = cf.fields.get(k);
    if (f) f.input.value = v;
  }
  for (const [k, v] of Object.entries(hint.options || {})) {
    const input = document.querySelector(`[data-option="${CSS.escape(k)}"]`);
    if (input) input.value = v;
  }
};
