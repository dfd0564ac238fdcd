/**
 * Handler types read from the declarations, as Fastify's type providers do: one declaration, two uses
 * (ajv validates with it at run time; the compiler types the callback with it).
 *
 *   inputSchema / outputSchema literal ──FromSchema (json-schema-to-ts)──► args / structured result
 *   a TypeBox schema (@sinclair/typebox) ─────────its `static` type──────► args / structured result
 *   prompt `arguments: {name: {required: true}}` ────────────────────────► { name: string; other?: string }
 *   resource template 'notes://{folder}/{id}{?q}' ───────────────────────► { folder, id: string | string[]; q?: … }
 *
 * Types only: nothing here exists at run time. A declaration whose type is not a literal (a schema typed
 * as `JsonObject`, a template held in a `string`) falls back to the untyped forms, so untyped code keeps
 * compiling.
 */
import type { FromSchema, JSONSchema } from 'json-schema-to-ts'
import type { ContentBlock, JsonObject } from '../wire/mcp-types.ts'

/** A TypeBox (0.x, `@sinclair/typebox`) schema: it carries its TypeScript type as a phantom `static` member. */
interface TypeBoxSchema {
  readonly static: unknown
  readonly params: unknown[]
}

/**
 * The type a schema describes, or `Fallback` when its type is not literal enough to tell: written
 * inline in `mcp.tool(…)` (the factory's const type parameters keep it literal) or declared `as const`.
 */
export type SchemaType<Schema, Fallback> = 0 extends 1 & Schema
  ? Fallback // `any`: nothing to read (and FromSchema<any> would recurse without end)
  : Schema extends TypeBoxSchema
  ? Schema['static']
  : Schema extends boolean | undefined
    ? Fallback
    : // A widened schema (`{type: string}`, `JsonObject`) is not a JSONSchema to json-schema-to-ts:
      // that is the test that the compiler still sees the literal.
      Schema extends JSONSchema
      ? FromSchema<Schema>
      : Fallback

/** A tool's arguments: the input schema's type when it is an object type, else a JSON object. */
export type ToolArgs<InputSchema> = SchemaType<InputSchema, JsonObject> extends infer Args extends JsonObject ? Args : JsonObject

/**
 * What a tool with an `outputSchema` may return: the structured content itself, a full result whose
 * `structuredContent` has that type, or an error result (which is not checked against the schema).
 * Without an output schema: a string, content blocks, a result or any JSON object, as before.
 *
 * The factory infers the callback's return type with a const type parameter (TypeScript does not
 * contextually type a return expression by a type parameter it is still inferring: `{outcome: 'won'}`
 * would widen to `string` and miss an enum), so these types accept the readonly forms that inference
 * gives literals.
 */
export type ToolReturnFor<OutputSchema> = undefined extends OutputSchema
  ? UntypedToolReturn
  : SchemaType<OutputSchema, NotLiteral> extends infer Structured
    ? [Structured] extends [NotLiteral]
      ? UntypedToolReturn
      : AcceptsReadonly<Structured> | StructuredResult<AcceptsReadonly<Structured>> | ToolErrorReturn
    : never

declare const notLiteral: unique symbol
/** What `SchemaType` falls back to for an output schema that is not a literal: the untyped returns then. */
type NotLiteral = typeof notLiteral

/** What a tool without an output schema may return (a `CallToolResult` is one of the JSON objects). */
export type UntypedToolReturn = string | readonly ContentBlock[] | JsonObject

/** A full result whose structured content has the output schema's type. */
export interface StructuredResult<Structured> {
  content: readonly ContentBlock[]
  structuredContent: Structured
  isError?: false
  _meta?: JsonObject
}

/** An `isError` result returned rather than thrown; its structured content is not checked. */
export interface ToolErrorReturn {
  isError: true
  content?: readonly ContentBlock[]
  structuredContent?: unknown
  _meta?: JsonObject
}

/** `T`, with its arrays accepted readonly at every depth (what a const type parameter infers for literals). */
export type AcceptsReadonly<T> = T extends readonly (infer Item)[] ? readonly AcceptsReadonly<Item>[] : T extends object ? { [K in keyof T]: AcceptsReadonly<T[K]> } : T

// ---- prompts -----------------------------------------------------------------------------------

/**
 * A prompt's arguments from its `arguments` block: `required: true` ones are strings, the others
 * optional strings. Undeclared (or declared through a `Record<string, …>` variable): any string key.
 */
export type PromptArgs<Declared> = string extends keyof Declared
  ? Record<string, string>
  : Flatten<
      { [Name in keyof Declared as Declared[Name] extends { readonly required: true } ? Name : never]: string } & {
        [Name in keyof Declared as Declared[Name] extends { readonly required: true } ? never : Name]?: string
      }
    >

// ---- resource templates ------------------------------------------------------------------------

/**
 * A resource template's variables from its RFC 6570 template: an exploded variable (`{/path*}`) is a
 * list; any other may come as a list too when its value holds commas (`a,b`). The only variable of a
 * simple (`{id}`) or reserved (`{+path}`) expression is always there; the others may be missing from
 * the URI. A template held in a plain `string` gives `Record<string, string | string[]>`.
 */
export type TemplateVariables<Template extends string> = string extends Template
  ? Record<string, string | string[]>
  : Flatten<
      { [Name in RequiredVariables<Template>]: VariableValue<Template, Name> } & {
        [Name in Exclude<VariableNames<Template>, RequiredVariables<Template>>]?: VariableValue<Template, Name>
      }
    >

type Expressions<Template extends string> = Template extends `${string}{${infer Expression}}${infer Rest}`
  ? Expression | Expressions<Rest>
  : never

type Operator = '+' | '#' | '.' | '/' | ';' | '?' | '&'

/** The variable list of an expression, without its operator. */
type VariableList<Expression extends string> = Expression extends `${Operator}${infer List}` ? List : Expression

type Split<List extends string> = List extends `${infer Head},${infer Tail}` ? Head | Split<Tail> : List

/** A varspec without its modifier (`id:3` → `id`, `path*` → `path`). */
type VariableName<Spec extends string> = Spec extends `${infer Name}*` ? Name : Spec extends `${infer Name}:${string}` ? Name : Spec

type VariableNames<Template extends string> = VariableName<Split<VariableList<Expressions<Template>>>>

// Only a lone variable of a simple or reserved expression must match something non-empty.
type RequiredVariables<Template extends string> = {
  [Expression in Expressions<Template>]: Expression extends `${Exclude<Operator, '+'>}${string}` | `${string},${string}`
    ? never
    : VariableName<VariableList<Expression>>
}[Expressions<Template>]

type VariableValue<Template extends string, Name extends string> = `${Name}*` extends Split<VariableList<Expressions<Template>>>
  ? string[]
  : string | string[]

/** Shows an intersection of mapped types as one object type (in hovers and error messages). */
type Flatten<T> = { [K in keyof T]: T[K] } & {}
