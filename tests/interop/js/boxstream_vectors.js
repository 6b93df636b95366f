// Boxes each boxstream case of protocol/vectors/handshake.json with the reference pull-box-stream
// and prints {"<case id>": "<wire hex, always ending with the goodbye>"} as JSON on stdout.
//
// usage: node boxstream_vectors.js <path to handshake.json>
'use strict'
var fs = require('fs')
var pull = require('pull-stream')
var boxes = require('pull-box-stream')

var cases = JSON.parse(fs.readFileSync(process.argv[2], 'utf8')).boxstream
var out = {}
var pending = cases.length

cases.forEach(function (c) {
  var plaintext = Buffer.from(c.plaintext_hex, 'hex')
  pull(
    pull.values(plaintext.length ? [plaintext] : []),
    boxes.createBoxStream(Buffer.from(c.key_hex, 'hex'), Buffer.from(c.nonce_hex, 'hex')),
    pull.collect(function (err, chunks) {
      if (err) throw err
      out[c.id] = Buffer.concat(chunks).toString('hex')
      if (--pending === 0) process.stdout.write(JSON.stringify(out) + '\n')
    })
  )
})
