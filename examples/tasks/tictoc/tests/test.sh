#!/bin/bash
python3 /tests/check_output.py /root/out.json && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt
