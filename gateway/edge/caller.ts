/**
 * The Caller contract lives in `wire/caller.ts`, the vocabulary every layer may import (the protocol
 * layer reads `ctx.caller`); the edge modules that make and key by callers import it from here too.
 */
export { addressKey, openCaller, quotaKey, type Caller } from '../wire/caller.ts'
