#!/usr/bin/env python3
"""Starts a bake with JSON logs, sends SIGTERM when a log line contains MATCH (after DELAY
seconds), and prints the exit code and the time from the signal to the exit. Bakes into
/tmp/sig-out with --fresh and 2 threads.

usage: sigterm-at.py TESSERA SCENE CONFIG MATCH [DELAY]
example: sigterm-at.py target/release/tessera city-L.obj recast-demo '"message":"regions, pass 3"'
"""
import subprocess,sys,time,json,os,signal
b,scene,cfg,match=sys.argv[1:5]; delay=float(sys.argv[5]) if len(sys.argv)>5 else 0
p=subprocess.Popen([b,'bake',scene,'--config',cfg,'--threads','2','--out','/tmp/sig-out','--log-format','json','--fresh'],stdout=subprocess.DEVNULL,stderr=subprocess.PIPE,text=True)
t0=time.time(); sent=None; last=''
for line in p.stderr:
    if sent is None and match in line:
        if delay: time.sleep(delay)
        os.kill(p.pid,signal.SIGTERM); sent=time.time(); last=line.strip()[:150]
rc=p.wait(); t=time.time()
print('rc',rc,'sent at %.2f'%((sent or t)-t0),'exit latency %.3f s'%(t-(sent or t)), last)
