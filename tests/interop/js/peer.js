// Reference Secret Handshake + box-stream peer for tests/test_shs_interop_js.py.
//
// usage: node peer.js server <network_key_hex> <server_seed_hex>
//        node peer.js client <network_key_hex> <client_seed_hex> <server_public_key_hex>
//
// The encrypted stream runs over stdin (from the Python peer) and stdout (to it). After the
// handshake this peer sends one box-stream payload, a JSON line {"remote": <hex of the key it
// authenticated>}, then echoes every payload it receives; when the Python peer's goodbye arrives it
// ends its own stream with a goodbye and exits 0. Any failure goes to stderr with exit code 1.
'use strict'
var SHS = require('secret-handshake')
var chloride = require('chloride')
var pull = require('pull-stream')
var cat = require('pull-cat')
var toPull = require('stream-to-pull-stream')

var mode = process.argv[2]
var networkKey = Buffer.from(process.argv[3], 'hex')
var keys = chloride.crypto_sign_seed_keypair(Buffer.from(process.argv[4], 'hex'))

function fail (err) {
  process.stderr.write('js peer ' + mode + ' failed: ' + (err && err.message || err) + '\n')
  process.exit(1)
}

function onSecure (err, plain) {
  if (err) return fail(err)
  var greeting = Buffer.from(JSON.stringify({ remote: plain.remote.toString('hex') }) + '\n')
  pull(
    cat([pull.values([greeting]), plain.source]),
    plain.sink
  )
}

var cipher
if (mode === 'server') {
  var authorize = function (id, cb) { cb(null, true) }
  cipher = SHS.createServer(keys, authorize, networkKey)(onSecure)
} else if (mode === 'client') {
  cipher = SHS.createClient(keys, networkKey)(Buffer.from(process.argv[5], 'hex'), onSecure)
} else {
  fail('mode must be server or client')
}

pull(
  toPull.source(process.stdin),
  cipher,
  toPull.sink(process.stdout, function (err) {
    if (err) return fail(err)
    process.exit(0)
  })
)
