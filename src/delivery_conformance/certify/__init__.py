"""Client certification: a referee proxy between a partner's client and a server, a scenario
catalogue as data, client-rule judges over the proxy's journal, and `certify-client`.

Layers (ARCHITECTURE.md, "Certify layer"): `journal` (what crossed the proxy, redacted),
`injections` (scripted answers, pure), `proxy` (Starlette app + uvicorn thread + httpx upstream),
`judges` (client rules over journal entries, pure), `scenarios` and `plan` (TOML loaders),
`runner` (flows as shell commands, one proxy per scenario), `certificate` (the bundle).
The partner's client is only ever run as a shell command; the sandbox only through `embedded`.
"""

__all__: list[str] = []
