"""`offline-scorer serve`: the judge behind an OpenAI-compatible `/v1/chat/completions`.

Clients that are not Python (Mastra's scorers, promptfoo, DeepEval, Ragas, Inspect) reach the
same local judge, constraints and cassettes as the library. Layers inside, top down: `app`
(HTTP: routes, auth, limits, SSE) > `service` (queueing on the model, replay inline) >
`translate` (OpenAI request -> `JudgeRequest`, with `mastra` and `inline_schema`) > `wire`
(the OpenAI shapes) and `responses`; `errors` is the one error shape.

Needs the `serve` extra (Starlette, uvicorn, sse-starlette); nothing else imports this package.
"""
