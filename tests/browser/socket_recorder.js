// Run before the page's own scripts: records what the page's WebSockets send and receive, so the test
// can see the poses the page sent and the frames that reached it. window.__socketLog holds
//   sent:    parsed JSON messages the page sent
//   text:    parsed JSON text messages received (session, status, event)
//   frames:  headers of the binary frames received
//   lastJpeg: the JPEG bytes of the latest frame (a Uint8Array)
(() => {
  const log = { sent: [], text: [], frames: [], lastJpeg: null };
  window.__socketLog = log;
  const NativeWebSocket = window.WebSocket;
  const nativeSend = NativeWebSocket.prototype.send;
  NativeWebSocket.prototype.send = function (data) {
    if (typeof data === 'string') {
      try { log.sent.push(JSON.parse(data)); } catch { /* the test's own malformed messages */ }
    }
    return nativeSend.call(this, data);
  };
  window.WebSocket = class extends NativeWebSocket {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (event) => {
        if (typeof event.data === 'string') {
          try { log.text.push(JSON.parse(event.data)); } catch { /* counted by the page itself */ }
          return;
        }
        const bytes = new Uint8Array(event.data);
        const length = new DataView(event.data).getUint32(0, true);
        log.frames.push(JSON.parse(new TextDecoder().decode(bytes.subarray(4, 4 + length))));
        log.lastJpeg = bytes.slice(4 + length);
      });
    }
  };
})();
