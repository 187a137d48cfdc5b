-- The request the server benchmarks send (wrk script): a mixed but fixed workload, so runs
-- compare: one LoRA fine-tune across two providers.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"workload": {"kind": "lora", "model": "Llama-3.1-8B", "seq_len": 2048, "tokens": 5e7},' ..
           ' "options": {"top": 5, "providers": ["aws", "gcp"]}}'
