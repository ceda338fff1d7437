#!/usr/bin/python3
"""A real SMTP server for the e-mail tests (Debian's python3-aiosmtpd).

  smtp_sink.py serve PORT DIR [DELAY_SECONDS [refuse-sender]]
      Accepts every message on 127.0.0.1:PORT and writes each to DIR/<n>.eml once the
      DATA is complete (after DELAY_SECONDS, to hold a message in flight); refuses
      recipients whose local part starts with "bounce" with 550 5.1.1 (no such mailbox) and
      "relay" with 554 5.7.1 (relay access denied: a server refusing every recipient), the
      message of a "big" recipient with 552 after its data (and, with refuse-sender, every
      sender with 530, as a server that wants a login). Prints "ready" when it
      listens.
  smtp_sink.py parse FILE OUTDIR
      Prints the message as JSON (messageId, from, to, subject, text, html, images) and
      writes its images to OUTDIR, named by Content-ID.
"""
import asyncio
import email
import email.policy
import json
import os
import sys
import time


def serve(port, out, delay, refuse_sender):
    from aiosmtpd.controller import Controller

    class Handler:
        async def handle_MAIL(self, server, session, envelope, address, mail_options):
            if refuse_sender:
                return "530 5.7.0 Authentication required"
            envelope.mail_from = address
            envelope.mail_options.extend(mail_options)
            return "250 OK"

        async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
            if address.split("@")[0].startswith("bounce"):
                return "550 5.1.1 no such mailbox"
            if address.split("@")[0].startswith("relay"):
                return "554 5.7.1 Relay access denied"
            envelope.rcpt_tos.append(address)
            return "250 OK"

        async def handle_DATA(self, server, session, envelope):
            print("data", flush=True)  # received: in flight until written below
            if any(r.split("@")[0].startswith("big") for r in envelope.rcpt_tos):
                return "552 5.3.4 Message too big for system"
            await asyncio.sleep(delay)
            name = os.path.join(out, "%d.eml" % time.time_ns())
            with open(name + ".tmp", "wb") as f:
                f.write(envelope.original_content or envelope.content)
            os.rename(name + ".tmp", name)
            return "250 OK"

    controller = Controller(Handler(), hostname="127.0.0.1", port=port)
    controller.start()
    print("ready", flush=True)
    try:
        while True:
            time.sleep(3600)
    finally:
        controller.stop()


def parse(path, outdir):
    with open(path, "rb") as f:
        msg = email.message_from_binary_file(f, policy=email.policy.default)
    text = msg.get_body(preferencelist=("plain",))
    html = msg.get_body(preferencelist=("html",))
    images = []
    for part in msg.walk():
        if part.get_content_maintype() == "image":
            cid = part["Content-ID"].strip("<>")
            target = os.path.join(outdir, cid.replace("@", "_") + ".png")
            with open(target, "wb") as f:
                f.write(part.get_content())
            images.append({"cid": cid, "path": target})
    print(json.dumps({
        "messageId": msg["Message-ID"],
        "from": msg["From"],
        "to": msg["To"],
        "subject": str(msg["Subject"]),
        "text": text.get_content() if text else "",
        "html": html.get_content() if html else "",
        "images": images,
    }))


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(int(sys.argv[2]), sys.argv[3], float(sys.argv[4]) if len(sys.argv) > 4 else 0.0,
              len(sys.argv) > 5 and sys.argv[5] == "refuse-sender")
    else:
        parse(sys.argv[2], sys.argv[3])
