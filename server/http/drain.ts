/**
 * Graceful drain of an HTTP server: every request that reached the server before shutdown gets its
 * whole answer, then the connections close. `trackConnections(server)` must be called before the
 * server accepts its first connection; `drain()` is called on SIGTERM/SIGINT (server/main.ts, inside
 * close-with-grace, whose `delay` — `SHUTDOWN_TIMEOUT_MS` — bounds the whole drain).
 *
 * What `drain()` does:
 * 1. at once: every response not started yet, and every request arriving from now on, is answered
 *    with `Connection: close` (Node then closes that connection after the answer);
 * 2. stops listening, so new connections are refused, at the end of the first event-loop turn that
 *    accepted no connection (or once 511 connections, Node's listen backlog, were accepted during the
 *    drain). Connections the kernel completed before the signal wait in its accept queue until the
 *    event loop accepts them, and a busy loop accepts about one per turn (measured on Node 20: 19
 *    waiting connections took 19 turns); closing the listener at once resets them all (ECONNRESET
 *    on the client, which had sent its request). They are accepted and served like the others;
 * 3. after one more turn (the input that had already arrived is then read and parsed): closes every
 *    connection with no response in flight that has already carried a request (idle keep-alive). A
 *    connection that has carried no request yet is left open while any response is in flight (its
 *    first request may still be on the way; it is answered with `Connection: close`), and closed
 *    once no response is in flight anywhere;
 * 4. a connection whose last response completes during the drain is closed once that response is
 *    completely handed to the socket (`'finish'`, then `socket.destroySoon()`: the bytes already
 *    written still reach the client);
 * 5. resolves when the listener and every connection are closed.
 *
 * Why not `http.Server.close()`, nor a library. On 50 concurrent events pages with SIGTERM at
 * 0.8 s, 41 answered ECONNRESET and large pages were cut mid-body while the request log said 200:
 * `server.close()` closes the listener at once (the connections still in the accept queue are
 * reset), and since Node 19 it also calls `closeIdleConnections()`, which destroys connections
 * accepted but whose request the busy loop has not read yet, and connections whose response has
 * ended (`res.end()`) but is still being written. http-terminator (3.2.0) destroys every
 * connection accepted after `terminate()` and every one without a current response, and calls
 * `server.close()`; stoppable and http-graceful-shutdown also close connections that have carried no
 * request yet at once. So the listener is closed with `net.Server.prototype.close` (what
 * `http.Server.close` calls after `closeIdleConnections`), and the connections are closed here as
 * they become idle. This is Go's `http.Server.Shutdown` policy, except that Go waits up to 5 s for
 * a new connection's first request where this waits as long as other responses are in flight.
 *
 * Not handled: a request whose headers are only partly received when the last response in flight
 * completes (its connection is closed), and HTTP upgrades / CONNECT (not used by envapi).
 */
import type http from 'node:http';
import net, { type Socket } from 'node:net';

/** What a drain found when it stopped listening (step 2). */
export interface DrainStart {
  /** requests received whose response had not completed */
  inFlight: number;
  /** connections open, with or without a request */
  connections: number;
}

/** The drain handle of one server (see the module docstring). */
export interface ConnectionDrain {
  /** Requests received whose response has not completed yet (responses still being written count). */
  readonly inFlight: number;
  /** Connections open now. */
  readonly connections: number;
  /**
   * Drains the server (steps 1–5 of the module docstring). `onStopAccepting` is called once, when
   * the listener has closed. Resolves when no connection is left; never rejects (a server that was
   * not listening just waits for its connections). Calling it again returns the same promise.
   */
  drain(onStopAccepting?: (start: DrainStart) => void): Promise<void>;
}

/** Per connection: responses not completed, and requests received so far. */
interface ConnectionState {
  active: number;
  served: number;
}

/**
 * Most connections the drain accepts before it stops listening: Node's default listen backlog, the
 * longest the kernel's queue of connections waiting for `accept()` can be.
 */
const ACCEPT_QUEUE_BOUND = 511;

/** Runs `fn` after the current event-loop turn and one complete turn more (its poll phase included). */
function afterNextTurn(fn: () => void): void {
  setImmediate(() => setImmediate(fn));
}

/**
 * Starts tracking `server`'s connections and requests (one `'connection'` and one `'request'`
 * listener; per request, one `'close'` listener on the response) and returns its drain handle.
 * Call it before the server listens.
 */
export function trackConnections(server: http.Server): ConnectionDrain {
  const connections = new Map<Socket, ConnectionState>();
  const pending = new Set<http.ServerResponse>();
  let inFlight = 0;
  let draining: Promise<void> | undefined;
  let idleCheckScheduled = false;
  // connections accepted in the current event-loop turn, and since the drain started
  let acceptedThisTurn = false;
  let acceptedSinceDrain = 0;

  /** Closes connections with nothing in flight: all of them that carried a request; fresh ones only when nothing is in flight at all. */
  const closeIdle = (): void => {
    idleCheckScheduled = false;
    for (const [socket, state] of connections) {
      if (state.active === 0 && (state.served > 0 || inFlight === 0)) socket.destroySoon();
    }
  };
  const scheduleIdleCheck = (): void => {
    if (idleCheckScheduled) return;
    idleCheckScheduled = true;
    afterNextTurn(closeIdle);
  };

  server.on('connection', (socket: Socket) => {
    acceptedThisTurn = true;
    acceptedSinceDrain++;
    connections.set(socket, { active: 0, served: 0 });
    socket.once('close', () => connections.delete(socket));
  });
  // before the app's listener, so that a request arriving during the drain is answered with
  // `Connection: close` even when the app sends its headers synchronously
  server.prependListener('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const socket = req.socket;
    let state = connections.get(socket);
    if (!state) connections.set(socket, (state = { active: 0, served: 0 }));
    state.active++;
    state.served++;
    inFlight++;
    pending.add(res);
    if (draining && !res.headersSent) res.setHeader('Connection', 'close');
    // 'close' follows 'finish' (the whole answer handed to the socket) or an aborted connection
    res.once('close', () => {
      pending.delete(res);
      state.active--;
      inFlight--;
      if (!draining) return;
      if (state.active === 0) socket.destroySoon();
      if (inFlight === 0) scheduleIdleCheck();
    });
  });

  return {
    get inFlight() {
      return inFlight;
    },
    get connections() {
      return connections.size;
    },
    drain(onStopAccepting) {
      draining ??= new Promise<void>((resolve) => {
        for (const res of pending) if (!res.headersSent) res.setHeader('Connection', 'close');
        acceptedSinceDrain = 0;
        const stopWhenNoneWaiting = (): void => {
          if (acceptedThisTurn && acceptedSinceDrain < ACCEPT_QUEUE_BOUND) {
            acceptedThisTurn = false;
            setImmediate(stopWhenNoneWaiting);
            return;
          }
          // resolves once the listener is closed and the last connection has closed
          net.Server.prototype.close.call(server, () => resolve());
          onStopAccepting?.({ inFlight, connections: connections.size });
          scheduleIdleCheck();
        };
        // the current turn may have accepted before the signal: count from the next turn on
        setImmediate(() => {
          acceptedThisTurn = false;
          setImmediate(stopWhenNoneWaiting);
        });
      });
      return draining;
    },
  };
}
