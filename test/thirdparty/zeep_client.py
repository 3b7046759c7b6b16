"""A SOAP client nobody here wrote (zeep) against the emulator: it builds itself from the served
WSDL and validates every response strictly against it (element order, required elements, no
unknown elements). Prints one JSON object with what it saw; any schema violation raises."""
import base64
import json
import sys

import zeep
from zeep.exceptions import Fault

wsdl, key, inbound_id, upload_name = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
settings = zeep.Settings(strict=True, xml_huge_tree=True)
client = zeep.Client(wsdl, settings=settings)
svc = client.service
out = {}

out["version"] = svc.Version()
sid = svc.Login(LoginName="erp", Password="Demo-pass1")
out["session"] = sid
who = svc.WhoAmI(SessionID=sid)
out["whoami"] = {"UserID": who.UserID, "MailboxID": who.MailboxID, "TimeOut": who.TimeOut, "AuthLevel": who.AuthLevel}
cur = svc.SessionLogCurrent(SessionID=sid)
out["sessionStatus"] = cur.Status
inbox = svc.ParcelInBox(SessionID=sid)
items = inbox.ParcelIDInfoList.ParcelIDInfo if inbox.ParcelIDInfoList else []
out["inbox"] = [{"ParcelID": p.ParcelID, "FileName": p.FileName, "ParcelBytes": p.ParcelBytes, "Direction": p.Direction} for p in items]
info = svc.ParcelInfo(SessionID=sid, ParcelID=inbound_id)
out["info"] = {"StatusCode": info.StatusCode, "ParcelID": info.ParcelID}
f = svc.ParcelDownload(SessionID=sid, ParcelID=inbound_id)
out["download"] = {"FileName": f.FileName, "Bytes": f.Bytes, "content": base64.b64encode(f.Content).decode(), "Standard": f.Standard}
fa = svc.ParcelDownloadA(SessionID=sid, ParcelID=inbound_id)
out["downloadA"] = fa.ContentBase64String
out["confirm"] = svc.ParcelDownloadConfirm(SessionID=sid, ParcelID=inbound_id)
out["confirmAgain"] = svc.ParcelDownloadConfirm(SessionID=sid, ParcelID=inbound_id)
after = svc.ParcelInBox(SessionID=sid)
out["inboxAfter"] = after.Count
data = ("ISA*00*          *00*          *ZZ*GRIDSYNC       *ZZ*DEMOPARTNER    *260101*1200*U*00401*000000001*0*P*>~"
        "GS*PO*GRIDSYNC*DEMOPARTNER*20260101*1200*1*X*004010~ST*850*0001~SE*2*0001~GE*1*1~IEA*1*000000001~").encode()
up = svc.ParcelUpload(SessionID=key, FileName=upload_name, Bytes=len(data), Content=data)
out["upload"] = up
mft = svc.ParcelUploadMft(SessionID=key, FileName=upload_name + ".mft", Bytes=5, Content=b"hello", GridIDFrom=5001, GridIDTo=5002)
out["uploadMft"] = mft
inproc = svc.ParcelOutBoxInProcessEx(SessionID=key, NetworkID=0, MailboxID=0)
out["outboxInProcess"] = inproc.Count
arch = svc.ParcelOutBoxArchiveEx(SessionID=key, NetworkID=0, MailboxID=0, BeginDate="2000-01-01T00:00:00", EndDate="2100-01-01T00:00:00",
                                 GridIDFrom=0, GridIDTo=0, MailbagControlID="", PageNo=1, RecordsPerPage=500)
out["outboxArchive"] = arch.Count
errs = svc.ParcelOutBoxErrorEx(SessionID=key, NetworkID=0, MailboxID=0, BeginDate="2000-01-01T00:00:00", EndDate="2100-01-01T00:00:00")
out["outboxError"] = errs.Count
manifest = svc.ParcelManifest(SessionID=key, ParcelID=up)
out["manifest"] = len(manifest or [])
out["tpList"] = [g.GridID for g in svc.TPList(SessionID=key, ShowInactive=False)]
out["network"] = svc.NetworkInfo(SessionID=key, NetworkID=0).Name
out["mailboxes"] = [m.MailboxID for m in svc.MailboxList(SessionID=key, Name="")]
out["interconnects"] = [i.InterconnectID for i in svc.InterconnectListByGridID(SessionID=key, GridID1=5001, GridID2=0)]
out["user"] = svc.UserInfo(SessionID=key, UserID=0).LoginName
out["interchanges"] = len(svc.InterchangeOutBox(SessionID=key, BeginDate="2000-01-01T00:00:00", EndDate="2100-01-01T00:00:00", GridIDFrom=0, GridIDTo=0, InterchangeControlID="") or [])
out["sessionLog"] = len(svc.SessionLog(SessionID=sid, MaxRecords=10) or [])
out["now"] = svc.NowUTC().isoformat()
try:
    svc.ParcelInfo(SessionID="00000000-0000-0000-0000-000000000000", ParcelID=inbound_id)
    out["fault"] = None
except Fault as e:
    info = e.detail.find("ErrorInfo")
    out["fault"] = {"code": e.code, "message": e.message, "ErrorCode": info.findtext("ErrorCode"), "ErrorItem": info.findtext("ErrorItem"),
                    "GridOSSOAPErrorCode": e.detail.findtext("GridOSSOAPErrorCode")}
out["logout"] = svc.Logout(SessionID=sid)

s12 = client.bind("GridOS_x0020_API_x0020_v4", "GridOS_x0020_API_x0020_v4Soap12")
who12 = s12.WhoAmI(SessionID=key)
out["soap12"] = {"UserID": who12.UserID, "inbox": s12.ParcelInBox(SessionID=key).Count}
try:
    s12.ParcelDownload(SessionID=key, ParcelID=999999999)
    out["fault12"] = None
except Fault as e:
    out["fault12"] = {"code": e.code, "ErrorCode": e.detail.find("ErrorInfo").findtext("ErrorCode")}
print(json.dumps(out, default=str))
