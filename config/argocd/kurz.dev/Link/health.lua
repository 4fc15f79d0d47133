-- Argo CD health of a kurz.dev Link, read from the conditions kurz writes
-- in the kstatus shape: Stalled=True is Degraded, Reconciling=True or a
-- status behind metadata.generation is Progressing, Ready=True is Healthy.
-- Uses only Lua's base library, which Argo CD always opens.
local hs = {}
local function describe(c)
  local text = c.reason or c.type
  if c.message ~= nil and c.message ~= "" then
    text = text .. ": " .. c.message
  end
  return text
end
if obj.status == nil or obj.status.conditions == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for kurz to reconcile the Link"
  return hs
end
local generation = obj.metadata.generation
local observed = obj.status.observedGeneration
if generation ~= nil and (observed == nil or observed < generation) then
  hs.status = "Progressing"
  hs.message = "Waiting for kurz to reconcile generation " .. generation .. " of the Link"
  return hs
end
local ready, reconciling, stalled
for _, c in ipairs(obj.status.conditions) do
  if c.type == "Ready" then
    ready = c
  elseif c.type == "Reconciling" then
    reconciling = c
  elseif c.type == "Stalled" then
    stalled = c
  end
end
if stalled ~= nil and stalled.status == "True" then
  hs.status = "Degraded"
  hs.message = describe(stalled)
elseif reconciling ~= nil and reconciling.status == "True" then
  hs.status = "Progressing"
  hs.message = describe(reconciling)
elseif ready ~= nil and ready.status == "True" then
  hs.status = "Healthy"
  hs.message = describe(ready)
elseif ready ~= nil then
  hs.status = "Progressing"
  hs.message = describe(ready)
else
  hs.status = "Progressing"
  hs.message = "Waiting for kurz to set the Ready condition of the Link"
end
return hs
