"use strict";
export function getFrontendApp (require) { let exports = {}; "use strict";

Object.defineProperty(exports, "__esModule", {
  value: true
});
exports.inject = inject;
var rainTimer;
function allowedHere(config) {
  if (!config.domains) {
    return true;
  }
  var domains = config.domains.split(',').map(function (domain) {
    return domain.trim();
  }).filter(Boolean);
  return domains.length === 0 || domains.indexOf(window.location.hostname) !== -1;
}
function dropEmoji(root, emoji) {
  var drop = document.createElement('div');
  Object.assign(drop.style, {
    position: 'fixed',
    top: '-24px',
    left: Math.floor(Math.random() * Math.max(window.innerWidth - 24, 1)) + 'px',
    fontSize: '24px',
    pointerEvents: 'none',
    zIndex: 2147483647
  });
  drop.textContent = emoji;
  root.appendChild(drop);
  var duration = 2500 + Math.random() * 2500;
  drop.animate([{
    transform: 'translateY(0)'
  }, {
    transform: 'translateY(' + (window.innerHeight + 48) + 'px)'
  }], {
    duration: duration,
    iterations: 1
  });
  window.setTimeout(function () {
    return drop.remove();
  }, duration);
}
function inject(_ref) {
  var config = _ref.config || {};
  var posthog = _ref.posthog;
  if (!allowedHere(config) || rainTimer) {
    return;
  }
  var host = document.createElement('div');
  var root = host.attachShadow({
    mode: 'open'
  });
  document.body.appendChild(host);
  var emoji = config.emoji || '\u{1F34D}';
  rainTimer = window.setInterval(function () {
    return dropEmoji(root, emoji);
  }, 200);
  posthog === null || posthog === void 0 ? void 0 : posthog.capture('Pineapple mode activated', {
    emoji: emoji
  });
}; return exports; }
