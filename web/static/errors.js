// Records every uncaught error and unhandled promise rejection of the page:
// appended to the hidden <pre id="lens-errors"> (the headless test reads it;
// it stays empty on a healthy page) and logged with console.error. A classic
// script loaded first, so it also sees errors of the modules that follow,
// including ones that fail to load.
(function () {
  'use strict';
  const pending = [];

  function box() {
    return document.getElementById('lens-errors');
  }

  function record(text) {
    const target = box();
    if (target) {
      target.textContent += text + '\n';
    } else {
      pending.push(text);
    }
    console.error('lens: ' + text);
  }

  // Capture phase: a <script> or <link> that fails to load fires `error` on
  // the element, which does not bubble to window.
  window.addEventListener('error', (event) => {
    const el = event.target;
    if (el && el !== window && (el.src || el.href)) {
      record('failed to load ' + (el.src || el.href));
      return;
    }
    const where = event.filename ? ` (${event.filename}:${event.lineno})` : '';
    record(String(event.message || 'error') + where);
  }, true);

  window.addEventListener('unhandledrejection', (event) => {
    const reason = event.reason;
    record('unhandled rejection: ' +
           (reason && reason.stack ? reason.stack : String(reason)));
  });

  document.addEventListener('DOMContentLoaded', () => {
    const target = box();
    if (target && pending.length) target.textContent += pending.join('\n') + '\n';
    pending.length = 0;
  });

  // For the app: errors it catches itself that are bugs, not API answers.
  window.lensReportError = (error) =>
    record(error && error.stack ? error.stack : String(error));
})();
