// Parses what `cloudfit export` writes with the formats' own parsers:
//  - Terraform with HashiCorp's HCL parser (hashicorp/hcl compiled to WebAssembly, the parser
//    Terraform itself uses), then checks the resource types and provider sources;
//  - Kubernetes manifests with validators generated from the Kubernetes OpenAPI schema
//    (kubernetes-models), for every kind cloudfit writes and for packaging/kubernetes/;
//  - SkyPilot tasks with a YAML 1.2 parser.
// One instance type per provider and GPU model (and one CPU-only type per provider) is exported
// on demand with one node (serving) and on spot with three (a job); the C++ tests cover every
// instance type with a structural check.
//
// Usage: node validate.mjs CLOUDFIT_BINARY SOURCE_DIR. Exits 77 (skipped) when the npm packages
// are not installed (scripts/test.sh installs them).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const [binary, sourceDir] = process.argv.slice(2);
let hcl, YAML, models;
try {
  hcl = await import("@cdktf/hcl2json");
  YAML = await import("yaml");
  models = {
    Job: (await import("kubernetes-models/batch/v1")).Job,
    Deployment: (await import("kubernetes-models/apps/v1")).Deployment,
    Service: (await import("kubernetes-models/v1")).Service,
    HorizontalPodAutoscaler: (await import("kubernetes-models/autoscaling/v2")).HorizontalPodAutoscaler,
  };
} catch (e) {
  console.log(`skipped: npm packages missing (${e.message}); run npm install in tests/formats`);
  process.exit(77);
}

let failures = 0;
let checks = 0;
function fail(what, message) {
  failures++;
  if (failures <= 30) console.error(`FAIL ${what}: ${message}`);
}

function cloudfit(args) {
  try {
    return { ok: true, out: execFileSync(binary, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }) };
  } catch (e) {
    return { ok: false, out: String(e.stderr || e.message) };
  }
}

const expectedTypes = {
  aws: ["aws_instance", "hashicorp/aws"],
  gcp: ["google_compute_instance", "hashicorp/google"],
  azure: ["azurerm_linux_virtual_machine", "hashicorp/azurerm"],
  alibaba: ["alicloud_instance", "aliyun/alicloud"],
  tencent: ["tencentcloud_instance", "tencentcloudstack/tencentcloud"],
};

function validateKubernetes(what, text) {
  const docs = YAML.parseAllDocuments(text);
  if (docs.length === 0) fail(what, "no documents");
  for (const doc of docs) {
    if (doc.errors.length) {
      fail(what, doc.errors[0].message);
      continue;
    }
    const object = doc.toJS();
    if (object === null) continue;
    const Model = models[object.kind];
    if (!Model) {
      fail(what, `unexpected kind ${object.kind}`);
      continue;
    }
    try {
      new Model(object).validate();
      checks++;
    } catch (e) {
      fail(what, `${object.kind}: ${e.message}`);
    }
  }
}

async function validateTerraform(what, provider, text) {
  let json;
  try {
    json = await hcl.parse(`${what}.tf`, text);
  } catch (e) {
    fail(what, String(e).slice(0, 300));
    return;
  }
  const [type, source] = expectedTypes[provider];
  const resources = json.resource || {};
  if (!resources[type]) fail(what, `no ${type} resource`);
  const required = json.terraform?.[0]?.required_providers?.[0] || {};
  const sources = Object.values(required).map((p) => p.source);
  if (!sources.includes(source)) fail(what, `provider source ${sources} is not ${source}`);
  checks++;
}

function validateSkyPilot(what, text) {
  const doc = YAML.parseDocument(text);
  if (doc.errors.length) return fail(what, doc.errors[0].message);
  const task = doc.toJS();
  if (typeof task.resources?.instance_type !== "string") fail(what, "no resources.instance_type");
  if (typeof task.resources?.use_spot !== "boolean") fail(what, "use_spot is not a boolean");
  if (!Number.isInteger(task.resources?.disk_size)) fail(what, "disk_size is not an integer");
  checks++;
}

const offers = JSON.parse(cloudfit(["instances", "--per-type", "--top", "100000", "--json"]).out).offers;
const types = new Map();
const seen = new Set();
for (const o of offers) {
  const key = `${o.provider}/${o.gpu ? o.gpu.name : "cpu"}`;
  if (seen.has(key) || types.has(o.instance_type)) continue;
  seen.add(key);
  types.set(o.instance_type, o);
}

for (const [name, offer] of types) {
  for (const [pricing, nodes] of [["ondemand", "1"], ["spot", "3"]]) {
    {
      const what = `${name} ${pricing} x${nodes}`;
      const base = ["export", "--instance", name, "--region", offer.region, "--pricing", pricing, "--nodes", nodes];
      if (expectedTypes[offer.provider]) {
        const tf = cloudfit([...base, "--format", "terraform"]);
        if (!tf.ok) fail(what, tf.out);
        else await validateTerraform(what.replace(/[^a-zA-Z0-9]+/g, "_"), offer.provider, tf.out);
      }
      if (["aws", "gcp", "azure", "lambda"].includes(offer.provider)) {
        const sky = cloudfit([...base, "--format", "skypilot"]);
        if (!sky.ok) fail(what, sky.out);
        else validateSkyPilot(what, sky.out);
      }
      const whole = !offer.gpu || Number.isInteger(offer.gpu.count);
      const k8s = cloudfit([...base, "--format", "kubernetes", ...(nodes === "1" ? ["--kind", "serve", "--replicas", "2"] : [])]);
      if (whole && !k8s.ok) fail(what, k8s.out);
      if (!whole && k8s.ok) fail(what, "a vGPU slice was exported to Kubernetes");
      if (whole && k8s.ok) validateKubernetes(what, k8s.out);
    }
  }
}

// The server's own manifests.
const manifests = path.join(sourceDir, "packaging", "kubernetes");
for (const file of fs.readdirSync(manifests).filter((f) => f.endsWith(".yaml"))) {
  validateKubernetes(`packaging/kubernetes/${file}`, fs.readFileSync(path.join(manifests, file), "utf8"));
}

// The validators must reject what Kubernetes and HCL reject, or passing means nothing.
let rejected = 0;
try {
  new models.Job({ metadata: { name: "x" }, spec: { backoffLimit: "three", template: { spec: { containers: [{ name: "a" }] } } } }).validate();
} catch {
  rejected++;
}
try {
  await hcl.parse("broken.tf", 'resource "aws_instance" "x" {\n  ami = \n}\n');
} catch {
  rejected++;
}
if (rejected !== 2) fail("self-check", "a broken document was accepted");

console.log(`${checks} documents parsed and validated, ${failures} failures`);
console.log(`${checks} passed, ${failures} failed`);
process.exit(failures === 0 && checks > 100 ? 0 : 1);
