// Preloaded into server-everything's HTTP mode (`node --require loopback.cjs ...`): its
// Express app listens on every interface (`app.listen(PORT)`); this makes every listen
// with a port and no host bind 127.0.0.1 only, so the test server is not on the network.
"use strict";
const net = require("node:net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const port = args[0];
  const portOnly = typeof port === "number" || (typeof port === "string" && /^\d+$/.test(port));
  if (portOnly && (args.length === 1 || typeof args[1] === "function")) {
    args.splice(1, 0, "127.0.0.1");
  }
  return listen.apply(this, args);
};
