#!/usr/bin/env python3
"""Writes Prosody 0.12 internal storage files for accounts user1..userN directly (fast bulk
provisioning, no prosodyctl per user): accounts/<user>.dat with SCRAM-SHA-1 credentials exactly as
mod_auth_internal_hashed stores them (hex stored_key/server_key, salt, iteration_count), and
roster/<user>.dat with a ring of mutual ("both") contacts. One shared salt, so PBKDF2 runs once.

Usage: provision-prosody.py DATA_DIR DOMAIN COUNT PASSWORD CONTACTS [PREFIX]
Idempotent: rewrites the same files for the same arguments."""
import hashlib, hmac, os, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from ring import neighbours  # noqa: E402

def escape(name):  # util.datamanager's encode(): everything but [%w_-] as %xx
    return "".join(c if (c.isalnum() and c.isascii()) or c in "_-" else "%%%02x" % ord(c) for c in name)

def lua_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'

def main():
    data, domain, count, password, contacts = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
    prefix = sys.argv[6] if len(sys.argv) > 6 else "user"
    iterations, salt = 4096, "xmppload-shared-salt"
    salted = hashlib.pbkdf2_hmac("sha1", password.encode(), salt.encode(), iterations)
    client_key = hmac.new(salted, b"Client Key", "sha1").digest()
    stored_key = hashlib.sha1(client_key).hexdigest()
    server_key = hmac.new(salted, b"Server Key", "sha1").hexdigest()
    host_dir = os.path.join(data, escape(domain))
    accounts_dir, roster_dir = os.path.join(host_dir, "accounts"), os.path.join(host_dir, "roster")
    os.makedirs(accounts_dir, exist_ok=True)
    os.makedirs(roster_dir, exist_ok=True)
    account = ("return {\n\t[\"iteration_count\"] = %d;\n\t[\"salt\"] = %s;\n\t[\"stored_key\"] = %s;\n"
               "\t[\"server_key\"] = %s;\n};\n") % (iterations, lua_string(salt), lua_string(stored_key), lua_string(server_key))
    for i in range(1, count + 1):
        user = f"{prefix}{i}"
        with open(os.path.join(accounts_dir, escape(user) + ".dat"), "w") as f:
            f.write(account)
        lines = ["return {", "\t[false] = { [\"version\"] = 1; [\"pending\"] = {}; };"]
        for j in neighbours(i, count, contacts):
            jid = f"{prefix}{j}@{domain}"
            lines.append(f"\t[{lua_string(jid)}] = {{ [\"subscription\"] = \"both\"; [\"name\"] = {lua_string(prefix + str(j))}; [\"groups\"] = {{ [\"load\"] = true; }}; }};")
        lines.append("};")
        with open(os.path.join(roster_dir, escape(user) + ".dat"), "w") as f:
            f.write("\n".join(lines) + "\n")
    print(f"provisioned {count} accounts on {domain} ({contacts} contacts each)")

main()
