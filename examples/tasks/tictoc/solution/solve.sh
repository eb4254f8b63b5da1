#!/bin/bash
python3 - <<'EOF'
import csv, json
rows = list(csv.DictReader(open('/root/aborts.tsv'), delimiter='\t'))
unnecessary = sorted({int(r['txn']) for r in rows if int(r['commit_ts']) < int(r['current_wts'])})
json.dump(unnecessary, open('/root/out.json', 'w'))
EOF
