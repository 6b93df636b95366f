// Runs negentropy's JavaScript reference on sets written by bench_negentropy.py, and prints
// {"messages", "round_trips", "bytes_total", "have", "need", "seconds", "sizes"} as JSON (sizes:
// each message's bytes, in wire order).
//
//   node negentropy_driver.js <Negentropy.js> <sets.bin> <frameSizeLimit>
//
// sets.bin: three sections (shared, initiator only, responder only), each a uint32 big-endian
// count and then count items of (uint32 big-endian timestamp, 32-byte id).
'use strict';
const fs = require('fs');
const { Negentropy, NegentropyStorageVector } = require(process.argv[2]);

function sections(buf) {
    const out = [];
    let pos = 0;
    for (let s = 0; s < 3; s++) {
        const count = buf.readUInt32BE(pos); pos += 4;
        const items = [];
        for (let i = 0; i < count; i++) {
            items.push([buf.readUInt32BE(pos), new Uint8Array(buf.subarray(pos + 4, pos + 36))]);
            pos += 36;
        }
        out.push(items);
    }
    return out;
}

function storage(...lists) {
    const st = new NegentropyStorageVector();
    for (const list of lists) for (const [t, id] of list) st.insert(t, id);
    st.seal();
    return st;
}

async function main() {
    const [shared, onlyA, onlyB] = sections(fs.readFileSync(process.argv[3]));
    const frame = parseInt(process.argv[4], 10);
    const initiator = new Negentropy(storage(shared, onlyA), frame);
    const responder = new Negentropy(storage(shared, onlyB), frame);
    initiator.wantUint8ArrayOutput = responder.wantUint8ArrayOutput = true;
    const started = process.hrtime.bigint();
    let message = await initiator.initiate();
    let messages = 0, bytes = 0, have = 0, need = 0;
    const sizes = [];
    while (message !== null) {
        messages++; bytes += message.length; sizes.push(message.length);
        const [reply] = await responder.reconcile(message);
        messages++; bytes += reply.length; sizes.push(reply.length);
        const [next, haveIds, needIds] = await initiator.reconcile(reply);
        have += haveIds.length; need += needIds.length;
        message = next;
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    process.stdout.write(JSON.stringify({ messages, round_trips: messages / 2, bytes_total: bytes, have, need, seconds, sizes }) + '\n');
}

main().catch((e) => { process.stderr.write(String(e && e.stack || e) + '\n'); process.exit(1); });
