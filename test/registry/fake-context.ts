/**
 * A minimal RequestContext for unit tests of the registry: enough for callbacks to see `_meta`,
 * the abort signal and the session id; anything that would reach a client throws.
 */
import type { RequestContext, SessionView } from '../../gateway/registry/context.ts'

function unavailable(): never {
  throw new Error('not available in registry unit tests')
}

/** A context whose `signal` is `controller.signal` (pass one to test cancellation). */
export function fakeContext(controller = new AbortController()): RequestContext {
  const session: SessionView = {
    id: 'session-1',
    protocolVersion: '2025-11-25',
    clientInfo: undefined,
    clientCapabilities: {},
    resourceUpdated: async () => {},
    enable: async () => {},
    disable: async () => {},
    elicit: unavailable,
    createMessage: unavailable,
    listRoots: unavailable,
    ping: unavailable,
    log: async () => {},
    shutdown: unavailable,
    state: { get: unavailable, set: unavailable, update: unavailable },
    register: unavailable,
    unregisterTool: unavailable,
    unregisterPrompt: unavailable,
    unregisterResource: unavailable,
    unregisterResourceTemplate: unavailable,
    replaceTools: unavailable,
    replacePrompts: unavailable,
    replaceResources: unavailable,
    replaceResourceTemplates: unavailable,
  }
  return {
    _meta: undefined,
    requestId: 1,
    caller: { principal: undefined, scopes: undefined, address: '127.0.0.1' },
    signal: controller.signal,
    session,
    progress: () => true,
    log: () => {},
    elicit: unavailable,
    elicitationComplete: () => {},
    createMessage: unavailable,
    listRoots: unavailable,
    ping: unavailable,
    closeStream: () => false,
    requestState: undefined,
    setRequestState: () => undefined,
  }
}
