/**
 * Reads an OpenAPI document (a file, or a URL fetched within a size and a time), parses JSON or YAML,
 * and has `@apidevtools/swagger-parser` validate it against the OpenAPI 3.0/3.1 schema and resolve
 * what it refers to. The document kept is the bundled one: its `$ref`s stay internal pointers, so the
 * schema converter can see (and bound) recursion by name.
 *
 *   file | URL (max_document_bytes, document_timeout) ─► JSON or YAML ─► 3.0.x / 3.1.x? ─► validate ─► bundle
 *
 * A URL document's own `$ref`s to other places are not followed (no request to hosts it names); a
 * file's may name other files beside it.
 */
import { readFile } from 'node:fs/promises'
import { load as loadYaml, CORE_SCHEMA } from 'js-yaml'
import type { OpenApiUpstreamConfig } from '../../config/types.ts'
import type { JsonObject } from '../../wire/mcp-types.ts'
import { isObject } from './schema-convert.ts'

/** A document that cannot be used: unreadable, unparsable, not OpenAPI 3, invalid. */
export class DocumentProblem extends Error {
  override name = 'DocumentProblem'
}

/** The document's text (bounded), from its file or its URL. */
async function readText(config: OpenApiUpstreamConfig): Promise<string> {
  const source = config.document
  if (!/^https?:\/\//i.test(source)) {
    try {
      return await readFile(source, 'utf8')
    } catch (error) {
      throw new DocumentProblem(`cannot read the document ${source}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`)
    }
  }
  const timeoutMs = config.document_timeout * 1000
  let response: Response
  try {
    // No redirect to another host: a document URL is what the config names.
    response = await fetch(source, { signal: AbortSignal.timeout(timeoutMs), redirect: 'error', headers: { accept: 'application/json, application/yaml, text/yaml, */*' } })
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code
    const why = (error as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : cause ?? 'the request failed (or redirected)'
    throw new DocumentProblem(`cannot fetch the document ${safeUrl(source)}: ${why}`)
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined)
    throw new DocumentProblem(`cannot fetch the document ${safeUrl(source)}: HTTP ${response.status}`)
  }
  const limit = config.max_document_bytes
  if (Number(response.headers.get('content-length') ?? NaN) > limit) {
    await response.body?.cancel().catch(() => undefined)
    throw new DocumentProblem(`the document ${safeUrl(source)} is larger than max_document_bytes (${limit})`)
  }
  const chunks: Uint8Array[] = []
  let size = 0
  try {
    for await (const chunk of (response.body ?? []) as AsyncIterable<Uint8Array>) {
      size += chunk.byteLength
      if (size > limit) {
        await response.body?.cancel().catch(() => undefined)
        throw new DocumentProblem(`the document ${safeUrl(source)} is larger than max_document_bytes (${limit})`)
      }
      chunks.push(chunk)
    }
  } catch (error) {
    if (error instanceof DocumentProblem) throw error
    throw new DocumentProblem(`cannot fetch the document ${safeUrl(source)}: ${(error as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : 'the transfer failed'}`)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/** The document, validated and bundled; throws DocumentProblem saying what is wrong. */
export async function loadDocument(config: OpenApiUpstreamConfig): Promise<JsonObject> {
  const text = await readText(config)
  const where = safeUrl(config.document)
  let parsed: unknown
  try {
    parsed = text.trimStart().startsWith('{') ? JSON.parse(text) : loadYaml(text, { schema: CORE_SCHEMA })
  } catch (error) {
    throw new DocumentProblem(`the document ${where} is neither JSON nor YAML: ${(error as Error).message.split('\n')[0]}`)
  }
  if (!isObject(parsed)) throw new DocumentProblem(`the document ${where} is not an object`)
  if (typeof parsed.swagger === 'string') throw new DocumentProblem(`the document ${where} is Swagger ${parsed.swagger}: only OpenAPI 3.0 and 3.1 are supported (convert it first)`)
  if (typeof parsed.openapi !== 'string' || !/^3\.[01]\./.test(parsed.openapi)) {
    throw new DocumentProblem(`the document ${where} is not OpenAPI 3.0 or 3.1 (its openapi field is ${JSON.stringify(parsed.openapi ?? null)})`)
  }
  // Imported here, not at the top: its ~60 modules cost a start 0.06 CPU-s, and only OpenAPI upstreams use it.
  const { default: SwaggerParser } = await import('@apidevtools/swagger-parser')
  const isUrl = /^https?:\/\//i.test(config.document)
  const resolve = isUrl ? { external: false } : { external: true, http: false as const }
  try {
    // validate() dereferences what it validates, so it gets its own copy; the bundle keeps the pointers.
    await SwaggerParser.validate(config.document, structuredClone(parsed) as never, { resolve, dereference: { circular: 'ignore' } } as never)
  } catch (error) {
    throw new DocumentProblem(`the document ${where} is not valid OpenAPI: ${oneLine((error as Error).message)}`)
  }
  try {
    return (await SwaggerParser.bundle(config.document, parsed as never, { resolve } as never)) as unknown as JsonObject
  } catch (error) {
    throw new DocumentProblem(`the document ${where}: ${oneLine((error as Error).message)}`)
  }
}

/** Problem messages on one line, a few hundred characters at most. */
function oneLine(message: string): string {
  const line = message.replace(/\s*\n\s*/g, '; ').replace(/;\s*$/, '')
  return line.length > 600 ? `${line.slice(0, 600)}…` : line
}

/** A URL without its query and credentials (they may carry a token), for messages. */
export function safeUrl(source: string): string {
  if (!/^https?:\/\//i.test(source)) return source
  try {
    const url = new URL(source)
    return `${url.origin}${url.pathname}`
  } catch {
    return '(an invalid URL)'
  }
}
