// The proxy's forwarding alone, nothing judged: `npm run proxy`'s forwarding (openapi/proxy/proxy.ts)
// with every exchange dropped once it has passed. The proxy section of npm run bench runs it beside
// the proxy, as the floor any proxy that really forwards pays here: the judge's cost is the gap.
// Arguments as the proxy's, `<document> <upstream-url>`; the document is not read.
import { plainError } from '../../src/http/error-handler.ts'
import { proxyServer } from '../../src/openapi/proxy/proxy.ts'

const upstream = process.argv[3]
const { server } = proxyServer({ upstream, judgedBytes: 1024 * 1024, timeoutMs: 30_000, errorWriter: () => plainError, onExchange: () => {} })
server.listen(Number(process.env.PORT), process.env.HOST, () => process.stdout.write(`forwarding to ${upstream}\n`))
