// Run before the page's own scripts: records what the page's WebSockets send and receive, so the test
// can see the poses the page sent and the frames that reached it. window.__socketLog holds
//   sent:    parsed JSON messages the page sent
//   text:    parsed JSON text messages received (session, status, event)
//   frames:  headers of the binary frames received
//   lastBands: the JPEG bands of the latest frame, [{ y, height, bytes: Uint8Array }] (one for a format-1 frame)
//   sockets: the page's WebSockets (a test hands them frame messages of its own through onmessage)
//   withheld: message types the page sends that are recorded but not passed on to the master
(() => {
  const log = { sent: [], text: [], frames: [], lastBands: null, sockets: [], withheld: [] };
  window.__socketLog = log;
  const NativeWebSocket = window.WebSocket;
  const nativeSend = NativeWebSocket.prototype.send;
  NativeWebSocket.prototype.send = function (data) {
    if (typeof data === 'string') {
      try {
        const message = JSON.parse(data);
        log.sent.push(message);
        if (log.withheld.includes(message.type)) return undefined;
      } catch { /* the test's own malformed messages */ }
    }
    return nativeSend.call(this, data);
  };
  window.WebSocket = class extends NativeWebSocket {
    constructor(...args) {
      super(...args);
      log.sockets.push(this);
      this.addEventListener('message', (event) => {
        if (typeof event.data === 'string') {
          try { log.text.push(JSON.parse(event.data)); } catch { /* counted by the page itself */ }
          return;
        }
        const bytes = new Uint8Array(event.data);
        const length = new DataView(event.data).getUint32(0, true);
        const header = JSON.parse(new TextDecoder().decode(bytes.subarray(4, 4 + length)));
        log.frames.push(header);
        let at = 4 + length;
        const table = header.bands || [{ y: 0, height: header.height, bytes: bytes.length - at }];
        log.lastBands = table.map(({ y, height, bytes: n }) => {
          const band = { y, height, bytes: bytes.slice(at, at + n) };
          at += n;
          return band;
        });
      });
    }
  };
})();
