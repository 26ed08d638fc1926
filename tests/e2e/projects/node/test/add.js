const { test } = require('uvu');
const assert = require('uvu/assert');
const add = require('../add.js');
test('adds', () => { assert.is(add(2, 3), 5); });
test.run();
