"use strict";
export function getFrontendApp (require) { let exports = {}; "use strict";

Object.defineProperty(exports, "__esModule", {
  value: true
});
exports.scene = void 0;
var _react = _interopRequireDefault(require("react"));
function _interopRequireDefault(obj) { return obj && obj.__esModule ? obj : { default: obj }; }
function NotificationBarPreview(_ref) {
  var config = _ref.config || {};
  var sticky = config.position !== 'top-of-page';
  return /*#__PURE__*/_react.default.createElement("div", {
    className: "notification-bar-preview"
  }, /*#__PURE__*/_react.default.createElement("h2", null, "Preview"), /*#__PURE__*/_react.default.createElement("div", {
    style: {
      width: '100%',
      minHeight: 56,
      display: 'flex',
      alignItems: 'center',
      justifyContent: 'center',
      position: sticky ? 'sticky' : 'relative',
      top: 0,
      color: config.textColor || '#333',
      background: config.backgroundColor || '#ebece8'
    },
    dangerouslySetInnerHTML: {
      __html: config.notification || ''
    }
  }), /*#__PURE__*/_react.default.createElement("p", null, sticky ? 'The bar stays at the top while scrolling.' : 'The bar scrolls away with the page.'));
}
const scene = {
  title: 'Notification Bar',
  component: NotificationBarPreview
};
exports.scene = scene;; return exports; }
