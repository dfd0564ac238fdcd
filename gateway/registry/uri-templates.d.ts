/** Types for the untyped `uri-templates` package (RFC 6570 expansion and de-substitution); only what mcp-edge uses. */
declare module 'uri-templates' {
  type Value = string | string[] | Record<string, string | string[]>
  interface UriTemplateInstance {
    readonly varNames: string[]
    readonly template: string
    fill(values: Record<string, unknown> | ((name: string) => unknown)): string
    /** The variables that expand to `uri`, or undefined; `strict` rejects values that are not percent-encoded. */
    fromUri(uri: string, options?: { strict?: boolean }): Record<string, Value> | undefined
    test(uri: string, options?: { strict?: boolean }): boolean
  }
  function uriTemplates(template: string): UriTemplateInstance
  export default uriTemplates
}
