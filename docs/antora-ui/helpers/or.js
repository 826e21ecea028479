'use strict'
module.exports = (...args) => args.slice(0, -1).find((it) => it) || args[args.length - 2]
