// The JavaScript surface of code mode, evaluated once per engine; every run starts from a snapshot taken after
// it. It defines console.log/warn/error and openclaw.tools.search/describe/call, removes everything else the
// QuickJS build adds (std, os, print, ...), and drives the model's async function.
//
// Everything the host boundary relies on is captured here, before any model code runs, so that a script which
// replaces Promise.prototype.then, JSON, Map or Function.prototype.call only breaks its own run. Security does
// not depend on this file: every call is checked again on the Go side of the bridge.
(function () {
  "use strict";
  const g = globalThis;
  const apply = Reflect.apply;

  // QuickJS wraps each host function in JS that calls the native proxy through Function.prototype.call, which a
  // script can replace. Bind the native proxies directly (the same trick an attacker would use, done first), so
  // host calls keep working whatever a script does to the built-ins.
  //
  // Every host function takes at most two arguments, and the argument list is an array literal: a literal
  // defines its elements itself, where assigning them one by one would run any index setter a script put on
  // Array.prototype and hand it the list (which it could then pad or point at another host function).
  function bindNative(wrapper) {
    const fnProto = Function.prototype;
    const savedCall = fnProto.call;
    let native, fnID;
    fnProto.call = function (thisArg, id) { native = this; fnID = id; };
    try { wrapper(); } finally { fnProto.call = savedCall; }
    return function (a, b) {
      return apply(native, undefined, [fnID, 0, 0, undefined, a, b]);
    };
  }
  const host = {
    log: bindNative(g.__ts_log),
    start: bindNative(g.__ts_start),
    wait: bindNative(g.__ts_wait),
    settle: bindNative(g.__ts_settle),
    idle: bindNative(g.__ts_idle),
    random: bindNative(g.__ts_random),
  };
  const later = g.setTimeout;
  // The run ends when the script's result is known and no call is outstanding. With nothing left to run the
  // interpreter's loop ends by itself; a script that made timers may have left some behind, and then a timer of
  // the prelude's ends the run (idle, below) whatever is still due. So the globals below note that timers were
  // made: a script that made none is spared the idle timer and the host's stop, a quarter of a cold run.
  // (Timers made through the qjs:os module directly are not seen: such a script runs until its timers are done,
  // within its fuel and deadline, as it asked.)
  let timersMade = false;
  for (const name of ["setTimeout", "setInterval"]) {
    const desc = Reflect.getOwnPropertyDescriptor(g, name);
    const native = desc.value;
    desc.value = { [name](func, delay) { timersMade = true; return native(func, delay); } }[name];
    Reflect.defineProperty(g, name, desc);
  }
  const promiseThen = Promise.prototype.then;
  const PromiseCtor = Promise;
  const ErrorCtor = Error;
  const TypeErrorCtor = TypeError;
  const StringCtor = String;
  const jsonStringify = JSON.stringify;
  const jsonParse = JSON.parse;
  const assign = Object.assign;
  const freeze = Object.freeze;
  const isArray = Array.isArray;
  const create = Object.create;
  const strSlice = String.prototype.slice;
  const strReplace = String.prototype.replace;
  // The host takes this many characters of an uncaught exception's message and of its stack.
  const maxErrorChars = 16384;

  function cut(s) {
    if (s.length <= maxErrorChars) return s;
    return apply(strSlice, s, [0, maxErrorChars]) + "… (" + (s.length - maxErrorChars) + " more characters cut)";
  }

  for (const name of ["__ts_log", "__ts_start", "__ts_wait", "__ts_settle", "__ts_idle", "__ts_random",
    "std", "os", "bjson", "print", "scriptArgs", "gc", "QJS_PROXY_VALUE", "console"]) {
    try { delete g[name]; } catch (e) { /* non-configurable: nothing to do */ }
  }

  // Randomness. The interpreter seeds its Math.random once, before the snapshot every run starts from, so each
  // run would draw the same sequence; and it has no crypto object. Math.random is xoshiro128** here, seeded
  // from the host's randomness on its first use in each run (the state below is null in the snapshot), and
  // crypto.getRandomValues fills an integer typed array with the host's bytes. RunOptions.RandomSeed makes both
  // a fixed stream for tests and replays.
  const imul = Math.imul;
  const parseIntFn = parseInt;
  const U8 = Uint8Array;
  const U32 = Uint32Array;
  const typedArrayProto = Object.getPrototypeOf(U8.prototype);
  const getterOf = (name) => Reflect.getOwnPropertyDescriptor(typedArrayProto, name).get;
  const typedTag = getterOf(Symbol.toStringTag);
  const typedBuffer = getterOf("buffer");
  const typedOffset = getterOf("byteOffset");
  const typedLength = getterOf("byteLength");
  const DOMExceptionCtor = g.DOMException;
  const integerArrays = { Int8Array: 1, Uint8Array: 1, Uint8ClampedArray: 1, Int16Array: 1, Uint16Array: 1,
    Int32Array: 1, Uint32Array: 1, BigInt64Array: 1, BigUint64Array: 1 };
  function hostBytes(n) {
    const hex = host.random(StringCtor(n));
    const out = new U8(n);
    for (let i = 0; i < n; i++) out[i] = parseIntFn(apply(strSlice, hex, [2 * i, 2 * i + 2]), 16);
    return out;
  }
  let rng = null;
  function rotl(x, k) { return (x << k) | (x >>> (32 - k)); }
  function next32() {
    const s = rng;
    const result = imul(rotl(imul(s[1], 5), 7), 9) >>> 0;
    const t = s[1] << 9;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3];
    s[2] ^= t; s[3] = rotl(s[3], 11);
    return result;
  }
  Reflect.defineProperty(Math, "random", { writable: true, enumerable: false, configurable: true,
    value: { random() {
      if (rng === null) {
        const b = hostBytes(16);
        rng = new U32(4);
        for (let i = 0; i < 4; i++) rng[i] = b[4 * i] | (b[4 * i + 1] << 8) | (b[4 * i + 2] << 16) | (b[4 * i + 3] << 24);
        if ((rng[0] | rng[1] | rng[2] | rng[3]) === 0) rng[0] = 1; // the one state xoshiro cannot leave
      }
      return ((next32() >>> 5) * 67108864 + (next32() >>> 6)) / 9007199254740992; // 53 random bits
    } }.random });
  const crypto = create(null);
  Reflect.defineProperty(crypto, "getRandomValues", { writable: true, enumerable: true, configurable: true,
    value: { getRandomValues(array) {
      const tag = ArrayBuffer.isView(array) ? apply(typedTag, array, []) : undefined;
      if (tag === undefined || integerArrays[tag] !== 1) {
        throw new TypeErrorCtor("crypto.getRandomValues: the argument must be an integer typed array");
      }
      const n = apply(typedLength, array, []);
      if (n > %MAXRANDOM%) {
        throw new DOMExceptionCtor("crypto.getRandomValues: " + n + " bytes asked, at most %MAXRANDOM% at once",
          "QuotaExceededError");
      }
      const view = new U8(apply(typedBuffer, array, []), apply(typedOffset, array, []), n);
      const bytes = hostBytes(n);
      for (let i = 0; i < n; i++) view[i] = bytes[i];
      return array;
    } }.getRandomValues });
  Reflect.defineProperty(g, "crypto", { writable: true, enumerable: false, configurable: true, value: crypto });

  function show(v) {
    try {
      switch (typeof v) {
        case "string": return v;
        case "function": return "[Function " + (v.name || "anonymous") + "]";
        case "bigint": return StringCtor(v) + "n";
        case "symbol":
        case "undefined": return StringCtor(v);
      }
      if (v instanceof ErrorCtor) {
        const head = StringCtor(v);
        return v.stack ? head + "\n" + apply(strReplace, StringCtor(v.stack), [/\n$/, ""]) : head;
      }
      const s = jsonStringify(v);
      return s === undefined ? StringCtor(v) : s;
    } catch (e) {
      try { return StringCtor(v); } catch (e2) { return "[unprintable]"; }
    }
  }

  function logger(level) {
    return function () {
      let text = "";
      for (let i = 0; i < arguments.length; i++) {
        text += (i ? " " : "") + show(arguments[i]);
      }
      host.log(level, text);
    };
  }

  const pending = create(null);
  let pendingCount = 0;
  let pumpScheduled = false;

  function schedulePump() {
    if (!pumpScheduled) {
      pumpScheduled = true;
      later(pump, 0);
    }
  }

  // pump hands completed host calls back to their promises. It runs from a timer, so it only blocks in the host
  // once the microtask queue is empty: every call the script could start before waiting has been started.
  function pump() {
    pumpScheduled = false;
    if (pendingCount === 0) return;
    const done = jsonParse(host.wait());
    for (let i = 0; i < done.length; i++) {
      const c = done[i];
      const p = pending[c.id];
      if (p === undefined) continue;
      delete pending[c.id];
      pendingCount--;
      if (c.ok) p.resolve(c.value);
      else p.reject(new ErrorCtor(c.error));
    }
    if (pendingCount > 0) schedulePump();
    else if (timersMade) later(idle, 0);
  }

  function rejected(err) {
    return new PromiseCtor(function (_, reject) { reject(err); });
  }

  function invoke(op, request) {
    let json;
    try {
      json = jsonStringify(request);
    } catch (e) {
      return rejected(new TypeErrorCtor("openclaw.tools." + op + ": arguments are not JSON-serializable: " + e.message));
    }
    let id;
    try {
      id = host.start(op, json);
    } catch (e) {
      return rejected(new ErrorCtor(e.message));
    }
    return new PromiseCtor(function (resolve, reject) {
      pending[id] = { resolve: resolve, reject: reject };
      pendingCount++;
      schedulePump();
    });
  }

  const tools = freeze({
    search: function search(query, options) {
      if (typeof options === "number") options = { limit: options };
      if (query !== null && typeof query === "object" && !isArray(query)) {
        return invoke("search", assign({}, query, options));
      }
      return invoke("search", assign({}, options, { query: query }));
    },
    describe: function describe(id) {
      return invoke("describe", { id: id });
    },
    call: function call(id, args) {
      return invoke("call", { id: id, args: args });
    },
  });

  Object.defineProperty(g, "openclaw", { value: freeze({ tools: tools }), enumerable: true });
  Object.defineProperty(g, "console", {
    value: freeze({ log: logger("log"), warn: logger("warn"), error: logger("error") }),
    writable: true, configurable: true,
  });

  function idle() { host.idle(); }

  function ok(v) {
    let json;
    try {
      json = jsonStringify(v === undefined ? null : v);
    } catch (e) {
      fail(new TypeErrorCtor("the result is not JSON-serializable: " + e.message));
      return;
    }
    host.settle("ok", json === undefined ? "null" : json);
    if (timersMade) later(idle, 0);
  }

  function fail(e) {
    let info;
    try {
      if (e instanceof ErrorCtor) {
        info = { name: cut(StringCtor(e.name)), message: cut(StringCtor(e.message)), stack: cut(StringCtor(e.stack || "")) };
      } else {
        info = { name: "", message: cut("Uncaught " + show(e)), stack: "" };
      }
    } catch (e2) {
      info = { name: "", message: "Uncaught exception (unprintable)", stack: "" };
    }
    host.settle("error", jsonStringify(info));
    if (timersMade) later(idle, 0);
  }

  // __ts_boot starts the model's code, prepared on the Go side as one async function (main). call says the code
  // was one of the function forms (a function, an export default, a final expression): a function it results
  // in is called, and what that returns awaited, too. Code that cannot await comes as a plain function, which
  // the interpreter runs for less; its return or throw settles a promise here as an async function's would
  // settle its own (at once, in the same call), so every callback after it runs in the same order.
  const getProto = Reflect.getPrototypeOf;
  const AsyncFunctionProto = getProto(async function () {});
  g.__ts_boot = function (call, main) {
    delete g.__ts_boot;
    if (typeof main !== "function") {
      fail(new TypeErrorCtor("the code must be the body of one async function"));
      return;
    }
    let p = getProto(main) === AsyncFunctionProto ? main() : new PromiseCtor(function (resolve) { resolve(main()); });
    if (call === true) {
      p = apply(promiseThen, p, [function (v) { return typeof v === "function" ? v() : v; }]);
    }
    apply(promiseThen, p, [ok, fail]);
  };
})();
