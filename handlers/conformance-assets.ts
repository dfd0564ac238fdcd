/**
 * Fixed payloads of the conformance fixture (`conformance.ts`): media, and the schemas whose exact
 * shape the official suite checks (see /work/shared/tools/conformance-fixture.md).
 */
import type { ElicitationSchema, JsonObject } from 'mcp-edge'

/** A valid 1×1 RGBA PNG, base64. */
export const PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=='

/** A valid WAV, base64: the 44-byte RIFF header (PCM, mono, 8 kHz, 16-bit) and 8 samples of a small wave. */
export const WAV_BASE64 = 'UklGRjQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YRAAAAAAALgLcBe4CwAASPSQ6Ej0'

/** `json_schema_2020_12_tool`'s input schema; the gateway must send it verbatim. */
export const JSON_SCHEMA_2020_12: JsonObject = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: {
    address: {
      $anchor: 'addressDef',
      type: 'object',
      properties: { street: { type: 'string' }, city: { type: 'string' } },
    },
  },
  properties: {
    name: { type: 'string' },
    address: { $ref: '#/$defs/address' },
    contactMethod: { type: 'string', enum: ['phone', 'email'] },
    phone: { type: 'string' },
    email: { type: 'string' },
  },
  allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
  if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
  then: { required: ['phone'] },
  else: { required: ['email'] },
  additionalProperties: false,
}

/** SEP-1034: one property of each primitive type, each with a default. */
export const DEFAULTS_SCHEMA: ElicitationSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', description: 'User name', default: 'John Doe' },
    age: { type: 'integer', description: 'User age', default: 30 },
    score: { type: 'number', description: 'User score', default: 95.5 },
    status: { type: 'string', description: 'User status', enum: ['active', 'inactive', 'pending'], default: 'active' },
    verified: { type: 'boolean', description: 'Verification status', default: true },
  },
}

const choices = (values: string[], titles: string[]) => values.map((v, i) => ({ const: v, title: titles[i] }))

/** SEP-1330: the five enum forms (untitled/titled single select, legacy enumNames, untitled/titled multi select). */
export const ENUMS_SCHEMA: ElicitationSchema = {
  type: 'object',
  properties: {
    untitledSingle: { type: 'string', description: 'Untitled single select', enum: ['option1', 'option2', 'option3'] },
    titledSingle: {
      type: 'string',
      description: 'Titled single select',
      oneOf: choices(['value1', 'value2', 'value3'], ['First Option', 'Second Option', 'Third Option']),
    },
    legacyEnum: {
      type: 'string',
      description: 'Legacy titled enum',
      enum: ['opt1', 'opt2', 'opt3'],
      enumNames: ['Option One', 'Option Two', 'Option Three'],
    },
    untitledMulti: {
      type: 'array',
      description: 'Untitled multi select',
      minItems: 1,
      maxItems: 3,
      items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
    },
    titledMulti: {
      type: 'array',
      description: 'Titled multi select',
      minItems: 1,
      maxItems: 3,
      items: { anyOf: choices(['value1', 'value2', 'value3'], ['First Choice', 'Second Choice', 'Third Choice']) },
    },
  },
}
